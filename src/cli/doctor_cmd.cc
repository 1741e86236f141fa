// `headroom doctor`: flags -> GatherFacts (doctor/gather.h) [+ the workload planned with
// plan's own flags] -> RunChecks -> text or JSON, env-report.json, and an exit status from
// the verdict (0 ready, 1 ready-with-warnings, 2 blocked, 3 usage error).
//
// Read-only: it samples, reads files and copies memory between two of its own buffers; it
// signals nothing and changes no setting. The environment variables the checks need are
// read here and handed down (nothing below cli reads the environment).
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/bytes.h"
#include "base/display_width.h"
#include "base/i18n.h"
#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/labels.h"
#include "cli/message_text.h"
#include "cli/plan_args.h"
#include "doctor/checks.h"
#include "doctor/gather.h"
#include "gpu/cuda_driver.h"
#include "gpu/nvml.h"
#include "plan/plan.h"

namespace headroom {
namespace {

// An environment variable; set but empty counts as unset.
std::optional<std::string> Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::optional<std::string>(v) : std::nullopt;
}

// "qlora llama-3.1-70b seq 8192 batch 2": a method name, a model, and "seq N" / "batch N"
// pairs, read into plan's flags; words starting with "--" are plan flags, read by plan's
// flag definitions. The request they make is what is planned.
PlanRequest WorkloadRequest(const std::string& text) {
  const std::vector<std::string> words = SplitWords(text, "--workload");
  PlanFlags fl;
  std::vector<std::string> flags;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word.rfind("--", 0) == 0) {
      flags.push_back(word);
      if (word.find('=') == std::string::npos && i + 1 < words.size() &&
          words[i + 1].rfind("--", 0) != 0) {
        flags.push_back(words[++i]);
      }
      continue;
    }
    if (ParseMethod(word)) {
      fl.method = word;
      continue;
    }
    static const std::pair<const char*, std::string PlanFlagText::*> kPairs[] = {
        {"seq", &PlanFlagText::seq},
        {"packing", &PlanFlagText::seq},
        {"batch", &PlanFlagText::batch},
        {"bs", &PlanFlagText::batch}};
    bool paired = false;
    for (const auto& [name, field] : kPairs) {
      if (word == name) {
        if (i + 1 >= words.size())
          throw UsageError{TrFormat("--workload: '{}' needs a number after it", word)};
        fl.*field = words[++i];
        paired = true;
      }
    }
    if (paired) continue;
    if (!fl.model.empty()) {
      throw UsageError{
          TrFormat("--workload: '{}' is not a method (full, lora, qlora, nvfp4-lora), 'seq N', "
                   "'batch N' or a plan flag, and the model is already '{}'",
                   word, fl.model)};
    }
    fl.model = word;
  }
  if (fl.model.empty())
    throw UsageError{Tr("--workload: no model named (e.g. \"qlora llama-3.1-70b seq 8192\")")};
  return ParsePlanWords(flags, "--workload", std::move(fl));
}

// The workload planned once: env-report.json takes the verdict's identifier and the plan
// line and advice in English, the screen the same message values translated.
WorkloadFacts PlanWorkload(const std::string& text, const std::string& root_dir,
                           const CliEnv& env) {
  const PlanInputs in = ResolveRequest(WorkloadRequest(text), "--workload", root_dir, env);
  const PlanResult plan = MakePlan(in.spec, in.workload, in.budget, in.options);
  WorkloadFacts w;
  w.description = text;
  w.peak_bytes = plan.footprint.peak_bytes();
  w.budget_bytes = plan.budget.budget_bytes;
  w.verdict = std::string(Name(plan.verdict));
  // TRANSLATORS: doctor's workload line: model, method, batch, seq, the plan's peak, the
  // budget and where it came from (/proc/meminfo or --budget), then the verdict.
  w.plan_line =
      Msg("{0} {1}, batch {2}, seq {3}: peak {4} against a budget of {5} ({6}): {7}", in.spec.name,
          Name(in.workload.method), in.workload.batch, in.workload.seq, GiB(w.peak_bytes),
          GiB(w.budget_bytes), plan.budget.source, VerdictWord(plan.verdict));
  for (const auto& a : plan.advice) w.advice.push_back(a.text);
  return w;
}

void PrintText(const CliEnv& env, const DoctorFacts& f, const std::vector<CheckResult>& checks,
               DoctorVerdict verdict, bool verbose) {
  std::fprintf(env.out, "%s\n", TrFormat("platform: {}", TranslatedText(PlatformLine(f))).c_str());
  if (f.kernel_driver)
    std::fprintf(env.out, "%s\n", TrFormat("kernel module: {}", *f.kernel_driver).c_str());
  std::fputc('\n', env.out);
  int fails = 0, warns = 0, skips = 0;
  for (const auto& c : checks) {
    // Padded by display width: a translated verdict is two CJK characters, four columns.
    std::fprintf(env.out, "%s %s %s: %s\n", PadToWidth(c.id, 4).c_str(),
                 PadToWidth(CheckVerdictLabel(c.verdict), 4).c_str(),
                 TranslatedText(c.title).c_str(), TranslatedText(c.summary).c_str());
    const bool show = verbose || c.verdict == CheckVerdict::kFail ||
                      c.verdict == CheckVerdict::kWarn || c.verdict == CheckVerdict::kSkip;
    if (show) {
      for (const auto& d : c.details)
        std::fprintf(env.out, "          %s\n", TranslatedText(d).c_str());
    }
    fails += c.verdict == CheckVerdict::kFail;
    warns += c.verdict == CheckVerdict::kWarn;
    skips += c.verdict == CheckVerdict::kSkip;
  }
  if (f.workload) {
    std::fprintf(env.out, "\n%s\n  %s\n", TrFormat("workload: {}", f.workload->description).c_str(),
                 TranslatedText(f.workload->plan_line).c_str());
    const double h = (static_cast<double>(f.workload->budget_bytes) -
                      static_cast<double>(f.workload->peak_bytes)) /
                     1e9;
    // TRANSLATORS: headroom here is the memory left over, not the program's name.
    std::fprintf(
        env.out, "  %s\n",
        TrFormat("headroom: {:.2f} GB (GB = 1e9 bytes; budget minus the plan's peak)", h).c_str());
    for (const auto& a : f.workload->advice) {
      std::fprintf(env.out, "  %s\n", TrFormat("advice: {}", TranslatedText(a)).c_str());
    }
  }
  // TRANSLATORS: doctor's last line: the overall verdict, then how many checks failed,
  // warned and were skipped.
  std::fprintf(
      env.out, "\n%s\n",
      (verbose
           ? TrFormat("verdict: {} ({} fail, {} warn, {} skip)", DoctorVerdictLabel(verdict), fails,
                      warns, skips)
           : TrFormat(
                 "verdict: {} ({} fail, {} warn, {} skip); --verbose shows every check's details",
                 DoctorVerdictLabel(verdict), fails, warns, skips))
          .c_str());
}

// doctor's flags: the app, then the variables its options write.
struct DoctorCommandFlags final : CommandFlags {
  CLI::App app{
      Tr("Preflight before a long run: the platform's identity, then ten checks of known failure "
         "modes, each "
         "pass / warn / fail / skip / info with its evidence:\n"
         "  G1 CUDA ABI (torch's CUDA from torch/version.py, libcudart registered, the driver's "
         "CUDA)\n"
         "  G2 flash-attn   G3 UMA headroom (MemAvailable, page cache)   G4 thermal snapshot\n"
         "  G5 bandwidth (host and device copies)   G6 contention (headroom ps)   G7 precision "
         "(sm_121a)\n"
         "  G8 playbooks (offline)   G9 container and library versions   G10 multi-node (tensor "
         "parallelism)\n"
         "With --workload, the memory headroom plan gives for it.\n\n"
         "Read-only: it signals nothing and changes no setting; G5 copies memory between two of "
         "its own buffers "
         "for about a second.\n\n"
         "exit status: 0 ready, 1 ready with warnings (any warn or skip), 2 blocked (any fail, or "
         "the workload does "
         "not fit), 3 usage error"),
      "headroom doctor"};
  std::string workload, python, report, nvml_lib, cuda_lib, root_dir;
  std::vector<std::string> configs;
  bool json = false, no_bandwidth = false, verbose = false;
  CLI::App& App() override { return app; }
  int UsageStatus() const override { return kExitDoctorUsage; }
};

}  // namespace

std::unique_ptr<CommandFlags> DefineDoctorFlags() {
  auto defined = std::make_unique<DoctorCommandFlags>();
  auto& [app, workload, python, report, nvml_lib, cuda_lib, root_dir, configs, json, no_bandwidth,
         verbose] = *defined;
  app.add_option(
      "--workload", workload,
      Tr("plan this too: \"qlora llama-3.1-70b seq 8192 [batch N]\" (plan flags allowed)"));
  app.add_option("--python", python,
                 Tr("the Python environment: an interpreter or a prefix (default: $VIRTUAL_ENV, "
                    "$CONDA_PREFIX, python3 on PATH)"));
  app.add_option("--config", configs,
                 Tr("a training or serving config (yaml, json, a launch script) to check for "
                    "tensor parallelism; repeatable"));
  app.add_option("--report", report, Tr("write env-report.json here (schema in docs/doctor.md)"));
  AddJsonFlag(app, json);
  app.add_flag("--no-bandwidth", no_bandwidth, Tr("skip G5's copy measurement (about a second)"));
  app.add_flag("-v,--verbose", verbose,
               Tr("show every check's details, not only those of fail / warn / skip"));
  AddNvmlLibFlag(app, nvml_lib);
  AddCudaLibFlag(app, cuda_lib);
  AddRootFlag(app, root_dir);
  return defined;
}

int RunDoctorCommand(const CliEnv& env, CommandFlags& given_flags) {
  auto& [app, workload, python, report, nvml_lib, cuda_lib, root_dir, configs, json, no_bandwidth,
         verbose] = FlagsOf<DoctorCommandFlags>(given_flags);
  const SysRoot root(root_dir.empty() ? env.default_root : std::filesystem::path(root_dir));
  try {
    if (!root_dir.empty() && !std::filesystem::is_directory(root.Path("proc"))) {
      throw UsageError{TrFormat("--root: {} has no proc/ directory", root_dir)};
    }
    for (const auto& c : configs) {
      std::error_code ec;
      if (!std::filesystem::is_regular_file(c, ec))
        throw UsageError{TrFormat("--config: {}: no such file", c)};
    }
    if (!report.empty()) {
      const auto parent = std::filesystem::path(report).parent_path();
      std::error_code ec;
      if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
        throw UsageError{
            TrFormat("--report: {}: directory {} does not exist", report, parent.string())};
      }
    }
    GatherOptions o;
    o.nvml_lib = ResolveNvmlLibrary(nvml_lib, std::getenv);
    o.cuda_lib = ResolveCudaLibrary(cuda_lib, std::getenv);
    o.python = {python, Env("VIRTUAL_ENV"), Env("CONDA_PREFIX"), Env("PATH")};
    if (!python.empty()) {
      if (auto check = FindPythonEnv(o.python); !check) throw UsageError{check.error().message};
    }
    o.configs = configs;
    o.torch_cuda_arch_list = Env("TORCH_CUDA_ARCH_LIST");
    o.world_size = Env("WORLD_SIZE");
    o.nnodes = Env("NNODES");
    o.container_env = Env("container");
    o.measure_bandwidth = !no_bandwidth;
    o.host_copy.bytes = 256ULL << 20;
    o.host_copy.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    o.host_copy.repeats = 5;
    o.self = ::getpid();
    o.platform = env.config.settings.platform_override();
    // env-report.json and --json are data, English by construction: the facts are gathered
    // in English (GatherFacts), and the checks run once; their words are message values that
    // ReportJson renders in English and the screen translates.
    std::optional<WorkloadFacts> planned;
    if (!workload.empty()) planned = PlanWorkload(workload, root.root().string(), env);
    if (o.measure_bandwidth && isatty(fileno(env.err))) {
      std::fprintf(
          env.err, "%s\n",
          Tr("measuring copy bandwidth for G5 (about a second; --no-bandwidth skips it)..."));
    }
    DoctorFacts facts = GatherFacts(root, o);
    facts.workload = planned;
    const auto checks = RunChecks(facts);
    const DoctorVerdict verdict = OverallVerdict(checks, facts.workload);
    const std::string text =
        ReportJson(facts, checks, verdict)
            .dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) +
        "\n";
    if (!report.empty()) WriteFileAtomically(report, text, "--report");
    if (json) {
      std::fputs(text.c_str(), env.out);
    } else {
      PrintText(env, facts, checks, verdict, verbose);
      if (!report.empty()) std::fprintf(env.out, "%s\n", TrFormat("report: {}", report).c_str());
    }
    return ExitStatusFor(verdict);
  } catch (const UsageError& e) {
    PrintError(env, "doctor: " + e.message);
    return kExitDoctorUsage;
  }
}

}  // namespace headroom
