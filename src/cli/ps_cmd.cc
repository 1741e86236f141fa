// `headroom ps`: who else holds the pool. flags -> NVML compute processes (optional) ->
// FindPoolHolders (sys/pool_holders.h) -> caps (sys/holder_caps.h) -> with --need, the
// advice (run/pool_advice.h) -> table or JSON (schema_version 1, docs/ps.md).
//
// It only reads: nothing is signalled. The command to stop a holder is printed for the
// user to run. Environments are read for the few named variables only; nothing else from
// them is printed (they hold tokens), and secret-looking flags are masked in command lines.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/i18n.h"
#include "base/table.h"
#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/labels.h"
#include "cli/message_text.h"
#include "gpu/nvml.h"
#include "run/pool_advice.h"
#include "sys/holder_caps.h"
#include "sys/meminfo.h"
#include "sys/pool_holders.h"

namespace headroom {
namespace {

// Command lines are cut to this many characters in the table (--json has them whole).
constexpr size_t kCommandColumnChars = 60;

struct GpuList {
  std::optional<std::vector<GpuProcess>> processes;  // nullopt: NVML not available
  std::string note;                                  // why not, or a device's list unread
};

GpuList ReadGpuProcesses(const std::string& library) {
  GpuList out;
  auto nvml = Nvml::Open(library);
  if (!nvml) {
    out.note = nvml.error().message;
    return out;
  }
  out.processes.emplace();
  for (unsigned i = 0; i < (*nvml)->device_count(); ++i) {
    const GpuReading r = (*nvml)->ReadDevice(i);
    if (r.processes) {
      out.processes->insert(out.processes->end(), r.processes->begin(), r.processes->end());
    } else {
      out.note = TrFormat("nvml: device {}: process list not readable", i);
    }
  }
  return out;
}

std::string OptBytes(const std::optional<uint64_t>& bytes) {
  return bytes ? FormatGiB(*bytes) : "-";
}

std::string CapCell(const PoolHolder& h, const HolderCap& cap) {
  // TRANSLATORS: the CAP cell of a server's worker: its cap is the server's (pid {}).
  if (h.part_of) return TrFormat("(of pid {})", *h.part_of);
  if (cap.pool_fraction) return fmt::format("{:.2f} ({})", *cap.pool_fraction, cap.source);
  if (cap.cap_bytes) return TrFormat("{} (torch cap)", FormatGiB(*cap.cap_bytes));
  // TRANSLATORS: the CAP cell: the holder takes its memory when it loads and keeps it.
  if (cap.fixed_after_load) return Tr("fixed at load");
  // TRANSLATORS: the CAP cell: no cap at all.
  return Tr("none");
}

std::string Shorten(const std::string& text, size_t max_chars) {
  return text.size() <= max_chars ? text : text.substr(0, max_chars - 3) + "...";
}

nlohmann::ordered_json HolderJson(const PoolHolder& h, const HolderCap& cap,
                                  const HolderAdvice* advice) {
  using Json = nlohmann::ordered_json;
  auto or_null = [](const auto& v) { return v ? Json(*v) : Json(nullptr); };
  Json settings = Json::array();
  for (const auto& s : cap.settings)
    settings.push_back({{"name", s.name}, {"value", s.value}, {"source", s.source}});
  Json j = {
      {"pid", h.facts.pid},
      {"ppid", h.in_proc ? Json(h.facts.ppid) : Json(nullptr)},
      {"user", h.user},
      {"uid", or_null(h.facts.uid)},
      {"kind", std::string(HolderKindName(h.kind))},
      {"command", h.in_proc ? Json(DisplayCommand(h.facts)) : Json(nullptr)},
      {"in_proc", h.in_proc},
      {"in_gpu_list", h.in_gpu_list},
      {"rss_bytes", or_null(h.facts.rss_bytes)},
      {"pss_bytes", or_null(h.facts.pss_bytes)},
      {"gpu_bytes", or_null(h.gpu_bytes)},
      {"part_of", or_null(h.part_of)},
      {"cap",
       {{"fraction", or_null(cap.pool_fraction)},
        {"bytes", or_null(cap.cap_bytes)},
        {"source", cap.source.empty() ? Json(nullptr) : Json(cap.source)},
        {"fixed_after_load", cap.fixed_after_load}}},
      {"settings", settings},
      {"notes", EnglishTexts(cap.notes)},
  };
  if (advice) {
    j["advice"] = {{"action", std::string(HolderActionName(advice->action))},
                   {"held_bytes", advice->held_bytes},
                   {"size_bytes", or_null(advice->size_bytes)},
                   {"arithmetic", EnglishText(advice->arithmetic)},
                   {"stop_command",
                    advice->stop_command.empty() ? Json(nullptr) : Json(advice->stop_command)}};
  }
  return j;
}

void PrintText(const CliEnv& env, const std::vector<PoolHolder>& holders,
               const std::vector<HolderCap>& caps, const std::optional<PoolAdvice>& advice,
               const GpuList& gpu) {
  using A = TextTable::Align;
  std::vector<A> aligns = {A::kRight, A::kLeft,  A::kLeft, A::kRight,
                           A::kRight, A::kRight, A::kLeft};
  // TRANSLATORS: headings of the ps table; RSS, PSS and GPU are kept as they are. KIND cells
  // are detection names (vllm, ollama, python-torch, ...) and stay as they are.
  std::vector<std::string> head = {"PID", Tr("USER"), Tr("KIND"), "RSS", "PSS", "GPU", Tr("CAP")};
  if (advice) {
    aligns.push_back(A::kLeft);
    head.push_back(Tr("ADVICE"));
  }
  aligns.push_back(A::kLeft);
  head.push_back(Tr("COMMAND"));
  TextTable table(aligns);
  table.AddRow(head);
  for (size_t i = 0; i < holders.size(); ++i) {
    const PoolHolder& h = holders[i];
    std::vector<std::string> row = {std::to_string(h.facts.pid),
                                    h.user,
                                    std::string(HolderKindName(h.kind)),
                                    OptBytes(h.facts.rss_bytes),
                                    OptBytes(h.facts.pss_bytes),
                                    OptBytes(h.gpu_bytes),
                                    CapCell(h, caps[i])};
    if (advice) row.emplace_back(HolderActionLabel(advice->holders[i].action));
    row.push_back(h.in_proc ? Shorten(DisplayCommand(h.facts), kCommandColumnChars)
                            : Tr("(not in this pid namespace)"));
    table.AddRow(std::move(row));
  }
  if (holders.empty()) {
    std::fprintf(env.out, "%s\n",
                 Tr("no process holds the pool or will grab it (none of: vllm, sglang, ollama, "
                    "llama.cpp, tgi, "
                    "tensorrt-llm, trl, axolotl, torchrun, accelerate, deepspeed, ray workers, "
                    "python with torch, "
                    "NVML's GPU processes)"));
  } else {
    std::fputs(table.Render(0).c_str(), env.out);
  }
  bool first = true;
  for (size_t i = 0; i < holders.size(); ++i) {
    std::vector<std::string> lines;
    std::string settings;
    for (const auto& s : caps[i].settings) {
      if (!settings.empty()) settings += ", ";
      settings += s.value.empty() ? s.name : fmt::format("{}={} ({})", s.name, s.value, s.source);
    }
    if (!settings.empty()) lines.push_back(settings);
    for (const auto& n : caps[i].notes) lines.push_back(TranslatedText(n));
    for (const auto& l : lines) {
      if (first) std::fprintf(env.out, "\n%s\n", Tr("settings and notes:"));
      first = false;
      std::fprintf(env.out, "  %s\n", TrFormat("pid {}: {}", holders[i].facts.pid, l).c_str());
    }
  }
  if (advice) {
    std::fprintf(env.out, "\n%s\n",
                 TrFormat("beside a job that needs {}:", FormatGiB(advice->need_bytes)).c_str());
    for (const auto& a : advice->holders) {
      if (a.action == HolderAction::kPartOf) continue;
      std::fprintf(env.out, "  %s\n",
                   TrFormat("pid {}: {}", a.pid, TranslatedText(a.arithmetic)).c_str());
      if (a.action == HolderAction::kStop) {
        std::fprintf(env.out, "    %s\n",
                     TrFormat("to stop it (not done by headroom): {}",
                              a.stop_command.empty() ? std::string(Tr("stop it where it runs"))
                                                     : a.stop_command)
                         .c_str());
      }
    }
    std::fprintf(env.out, "%s\n", TranslatedText(advice->summary).c_str());
  }
  if (!gpu.note.empty()) {
    std::fprintf(
        env.out, "\n%s\n",
        TrFormat("gpu: {}; the GPU column is empty where NVML gave nothing", gpu.note).c_str());
  }
}

// ps's flags: the app, then the variables its options write.
struct PsCommandFlags final : CommandFlags {
  CLI::App app{
      Tr("List the processes that hold the memory pool or will grab it: NVML's GPU processes, "
         "inference servers (vllm, sglang, ollama, llama.cpp, tgi, tensorrt-llm), trainers and "
         "launchers (trl, axolotl, torchrun, accelerate, deepspeed), ray workers and python with "
         "torch loaded, with RSS, PSS, GPU memory and the cap each was started with.\n\n"
         "With --need, says for each whether it can stay beside a job of that size (keep) or "
         "should stop first, with the arithmetic, and prints the command to stop it. Nothing is "
         "ever signalled.\n\n"
         "exit status: 0 listed (with --need: the job fits beside everything kept); 1 with --need: "
         "something must stop first, or the job does not fit at all; 2 usage error"),
      "headroom ps"};
  std::string need_text, nvml_lib, root_dir;
  bool json = false;
  CLI::App& App() override { return app; }
};

}  // namespace

std::unique_ptr<CommandFlags> DefinePsFlags() {
  auto defined = std::make_unique<PsCommandFlags>();
  auto& [app, need_text, nvml_lib, root_dir, json] = *defined;
  app.add_option("--need", need_text,
                 Tr("the job's memory: SIZE or PCT of MemTotal (e.g. 4GiB, 10%)"));
  AddJsonFlag(app, json);
  AddNvmlLibFlag(app, nvml_lib);
  AddRootFlag(app, root_dir);
  return defined;
}

int RunPsCommand(const CliEnv& env, CommandFlags& given_flags) {
  auto& [app, need_text, nvml_lib, root_dir, json] = FlagsOf<PsCommandFlags>(given_flags);
  const SysRoot root(root_dir.empty() ? env.default_root : std::filesystem::path(root_dir));
  try {
    if (!root_dir.empty() && !std::filesystem::is_directory(root.Path("proc"))) {
      throw UsageError{TrFormat("--root: {} has no proc/ directory", root_dir)};
    }
    const auto meminfo = ReadMemInfo(root);
    const std::optional<uint64_t> total = meminfo ? meminfo->total_bytes() : std::nullopt;
    std::optional<uint64_t> need;
    if (app.count("--need") > 0) {
      if (!total) {
        throw UsageError{TrFormat(
            "--need: MemTotal unknown: {}",
            meminfo ? std::string(Tr("no MemTotal in proc/meminfo")) : meminfo.error().message)};
      }
      need = SizeOrPercentFlag(need_text, *total, "--need");
    }
    const std::string library = ResolveNvmlLibrary(nvml_lib, std::getenv);
    const GpuList gpu = ReadGpuProcesses(library);
    // Asked for by name: a library that does not load is worth a line on stderr.
    if (!library.empty() && !gpu.processes) PrintError(env, gpu.note);

    const auto holders = FindPoolHolders(root, gpu.processes, ::getpid());
    std::vector<HolderCap> caps;
    // A part (a server's worker) has no flags of its own: its holder's cap is the one that counts.
    for (const auto& h : holders) {
      caps.push_back(h.part_of
                         ? HolderCap{}
                         : ParseHolderCap(h.kind, CommandWords(h.facts.argv), h.facts.environ));
    }
    std::optional<PoolAdvice> advice;
    // The reserve kept free is the guard's kill level: [guard] kill_level where configured.
    if (need)
      advice =
          AdviseBesideJob(holders, caps, *need, *total, KillLevelBytes(env, "", "--need", *total));

    if (json) {
      using Json = nlohmann::ordered_json;
      Json out = {{"schema_version", 1},
                  {"mem_total_bytes", total ? Json(*total) : Json(nullptr)},
                  {"gpu",
                   {{"nvml", gpu.processes.has_value()},
                    {"note", gpu.note.empty() ? Json(nullptr) : Json(gpu.note)}}}};
      if (advice) {
        out["need"] = {{"need_bytes", advice->need_bytes},
                       {"reserve_bytes", advice->reserve_bytes},
                       {"budget_bytes", advice->budget_bytes},
                       {"kept_bytes", advice->kept_bytes},
                       {"fits", advice->fits},
                       {"summary", EnglishText(advice->summary)}};
      } else {
        out["need"] = nullptr;
      }
      out["processes"] = Json::array();
      for (size_t i = 0; i < holders.size(); ++i) {
        out["processes"].push_back(
            HolderJson(holders[i], caps[i], advice ? &advice->holders[i] : nullptr));
      }
      // replace: command lines need not be UTF-8.
      std::fprintf(env.out, "%s\n",
                   out.dump(2, ' ', false, Json::error_handler_t::replace).c_str());
    } else {
      PrintText(env, holders, caps, advice, gpu);
    }
    if (advice && !advice->fits) return kExitNegative;
    return kExitOk;
  } catch (const UsageError& e) {
    PrintError(env, "ps: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
