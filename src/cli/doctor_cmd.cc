// `headroom doctor`: flags -> GatherFacts (doctor/gather.h) [+ the workload planned with
// plan's own flags] -> RunChecks -> text or JSON, env-report.json, and an exit status from
// the verdict (0 ready, 1 ready-with-warnings, 2 blocked, 3 usage error).
//
// Read-only: it samples, reads files and copies memory between two of its own buffers; it
// signals nothing and changes no setting. The environment variables the checks need are
// read here and handed down (nothing below cli reads the environment).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/doctor_compare.h"
#include "cli/doctor_link.h"
#include "cli/doctor_view.h"
#include "cli/doctor_workload.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "doctor/checks.h"
#include "doctor/gather.h"
#include "doctor/workload.h"
#include "gpu/cuda_driver.h"
#include "gpu/nvml.h"

namespace headroom {
namespace {

// doctor's flags: the app, then the variables its options write.
struct DoctorCommandFlags final : CommandFlags {
  CLI::App app{
      Tr("Preflight before a long run: the platform's identity, then eleven checks of known "
         "failure "
         "modes, each pass / warn / fail / skip / info with its evidence:\n"
         "  G1 CUDA ABI (torch's CUDA from torch/version.py, libcudart registered, the driver's "
         "CUDA)\n"
         "  G2 flash-attn   G3 UMA headroom (MemAvailable, page cache)   G4 thermal snapshot\n"
         "  G5 bandwidth (host and device copies)   G6 contention (headroom ps)   G7 precision "
         "(sm_121a)\n"
         "  G8 playbooks (offline)   G9 container and library versions   G10 multi-node (tensor "
         "parallelism)\n"
         "  G11 distributed settings (NCCL error handling, NCCL wheel or system, Ray, Slurm)\n"
         "With --workload, the memory headroom plan gives for it. With --compare A.json B.json "
         "..., the nodes' env-report.json files side by side instead.\n\n"
         "Read-only: it signals nothing and changes no setting; G5 copies memory between two of "
         "its own buffers for about a second.\n\n"
         "exit status: 0 ready, 1 ready with warnings (any warn or skip), 2 blocked (any fail, or "
         "the workload does not fit), 3 usage error"),
      "headroom doctor"};
  std::string workload, python, report, nvml_lib, cuda_lib, root_dir;
  std::vector<std::string> configs, compare;
  bool json = false, no_bandwidth = false, verbose = false;
  PeerFlags peer;
  CLI::App& App() override { return app; }
  int UsageStatus() const override { return kExitDoctorUsage; }
};

}  // namespace

std::unique_ptr<CommandFlags> DefineDoctorFlags() {
  auto defined = std::make_unique<DoctorCommandFlags>();
  auto& [app, workload, python, report, nvml_lib, cuda_lib, root_dir, configs, compare, json,
         no_bandwidth, verbose, peer] = *defined;
  app.add_option(
      "--workload", workload,
      Tr("plan this too: \"qlora llama-3.1-70b seq 8192 [batch N]\", or \"from FILE\" (the run's "
         "own config, as plan --from); plan flags allowed"));
  app.add_option("--python", python,
                 Tr("the Python environment: an interpreter or a prefix (default: $VIRTUAL_ENV, "
                    "$CONDA_PREFIX, python3 on PATH)"));
  app.add_option("--config", configs,
                 Tr("a training or serving config (yaml, json, a launch script) to check for "
                    "tensor parallelism; repeatable"));
  app.add_option("--report", report, Tr("write env-report.json here (schema in docs/doctor.md)"));
  app.add_option("--compare", compare,
                 Tr("compare the env-report.json files of a multi-node run's nodes (driver, CUDA, "
                    "torch, NCCL, each node's verdict) instead of checking this machine"))
      ->expected(2, 64);
  AddJsonFlag(app, json);
  app.add_flag("--no-bandwidth", no_bandwidth, Tr("skip G5's copy measurement (about a second)"));
  app.add_flag("-v,--verbose", verbose,
               Tr("show every check's details, not only those of fail / warn / skip"));
  AddNvmlLibFlag(app, nvml_lib);
  AddCudaLibFlag(app, cuda_lib);
  AddRootFlag(app, root_dir);
  AddPeerFlags(app, peer);
  return defined;
}

namespace {

// The files the flags name, checked before anything is gathered.
void CheckPaths(const DoctorCommandFlags& f) {
  for (const auto& c : f.configs) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(c, ec))
      throw UsageError{TrFormat("--config: {}: no such file", c)};
  }
  // --report replaces only a regular file or nothing, never a --config it reads.
  if (!f.report.empty()) CheckOutputFlag(f.report, "--report", f.configs);
}

// What GatherFacts is told: the flags, the environment variables the checks need and
// [platform] from the configuration.
GatherOptions OptionsFor(const DoctorCommandFlags& f, const CliEnv& env) {
  GatherOptions o = DoctorGatherOptions();
  o.nvml_lib = ResolveNvmlLibrary(f.nvml_lib, std::getenv);
  o.cuda_lib = ResolveCudaLibrary(f.cuda_lib, std::getenv);
  o.python.python_flag = f.python;
  SetGatherEnvironment(o, std::getenv);
  if (!f.python.empty()) {
    if (auto check = FindPythonEnv(o.python); !check)
      throw UsageError{TranslatedText(check.error().what)};
  }
  o.configs = f.configs;
  o.measure_bandwidth = !f.no_bandwidth;
  o.self = ::getpid();
  o.platform = env.config.settings.platform_override();
  return o;
}

}  // namespace

int RunDoctorCommand(const CliEnv& env, CommandFlags& given_flags) {
  const auto& f = FlagsOf<DoctorCommandFlags>(given_flags);
  try {
    const bool gathers = !f.workload.empty() || !f.report.empty() || !f.configs.empty();
    if (f.peer.Any())  // the link between nodes, not this machine
      return RunDoctorLink(env, f.peer, f.python, f.json, f.verbose, gathers || !f.compare.empty());
    if (!f.compare.empty())  // the nodes' reports, not this machine
      return RunDoctorCompare(env, f.compare, f.json, f.verbose, gathers);
    const SysRoot root = RootFromFlag(env, f.root_dir);
    CheckPaths(f);
    const GatherOptions o = OptionsFor(f, env);
    // env-report.json and --json are data, English by construction: the facts are gathered
    // in English (GatherFacts), and the checks run once; their words are message values that
    // ReportJson renders in English and the screen translates.
    std::optional<WorkloadFacts> planned;
    if (!f.workload.empty()) planned = PlanDoctorWorkload(env, f.workload, root);
    if (o.measure_bandwidth) PrintBandwidthNotice(env);
    DoctorFacts facts = GatherFacts(root, o);
    facts.workload = planned;
    const auto checks = RunChecks(facts);
    const DoctorVerdict verdict = OverallVerdict(checks, facts.workload);
    const std::string text = ReportJsonText(facts, checks, verdict);
    if (!f.report.empty()) WriteFileAtomically(f.report, text, "--report", f.configs);
    if (f.json) {
      std::fputs(text.c_str(), env.out);
    } else {
      PrintDoctorReport(env, facts, checks, verdict, f.verbose, f.report);
    }
    return ExitStatusFor(verdict);
  } catch (const UsageError& e) {
    PrintError(env, "doctor: " + e.message);
    return kExitDoctorUsage;
  }
}

}  // namespace headroom
