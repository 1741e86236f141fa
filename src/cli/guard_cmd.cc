// `headroom guard`: flags -> GuardOptions -> RunGuard -> one summary line (or JSON) and
// the job's exit status (kExitGuardKilled when the guard killed it).
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/duration.h"
#include "base/i18n.h"
#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/guard_view.h"
#include "cli/message_text.h"
#include "run/guard.h"
#include "run/guard_record.h"
#include "run/torch_cap.h"
#include "store/journal.h"
#include "sys/meminfo.h"
#include "sys/processes.h"

namespace headroom {
namespace {

// guard's flags: the app, then the variables its options write.
struct GuardCommandFlags final : CommandFlags {
  CLI::App app{
      TrFormat(
          "Run a job so that running out of memory kills the job, never the machine.\n\n"
          "  headroom guard [options] -- CMD [ARGS...]\n  headroom guard [options] --pid PID\n\n"
          "The guard reads MemAvailable every 10-100 ms (10 ms near the level) and, below the "
          "kill level, sends SIGTERM to the whole job tree (its own session, process group and, "
          "where one can be made, cgroup), then SIGKILL when the grace runs out; far below the "
          "level, or when memory falls fast, SIGKILL at once.\n\n"
          "exit status: the job's own (its exit code, or 128 + signal); {} when the guard killed "
          "it; {} when --require-available refused to start; 2 usage error",
          kExitGuardKilled, kExitRefused),
      "headroom guard"};
  std::string min_available, warn_available, require_available, grace = "3s", events_path, root_dir,
                                                                pid;
  std::string journal_flag;
  bool no_journal = false;
  bool json = false, psi_kill = false, no_cgroup = false, torch_cap = false;
  std::vector<std::string> command;
  CLI::App& App() override { return app; }
};

}  // namespace

std::unique_ptr<CommandFlags> DefineGuardFlags() {
  auto defined = std::make_unique<GuardCommandFlags>();
  auto& [app, min_available, warn_available, require_available, grace, events_path, root_dir, pid,
         journal_flag, no_journal, json, psi_kill, no_cgroup, torch_cap, command] = *defined;
  app.add_option("--min-available", min_available,
                 Tr("kill below this MemAvailable: SIZE or PCT of MemTotal (default: [guard] "
                    "kill_level in config.toml, else the larger of 4GiB and 8%)"));
  app.add_option("--warn-available", warn_available,
                 Tr("one warning line per crossing below this (default: [guard] warn_level in "
                    "config.toml, else twice the kill level)"));
  app.add_option(
      "--require-available", require_available,
      Tr("refuse to start when MemAvailable is below SIZE; lists the usual holders of the pool"));
  app.add_option("--grace", grace, Tr("SIGTERM first, SIGKILL when this runs out (default 3s)"));
  app.add_option("--events", events_path,
                 Tr("append JSON lines (start, warn, trigger, term, kill, exit) to FILE"));
  app.add_option("--pid", pid, Tr("guard an existing process and its descendants"));
  app.add_flag("--psi-kill", psi_kill,
               Tr("sustained full memory pressure (PSI) is a kill reason too"));
  app.add_flag("--no-cgroup", no_cgroup, Tr("do not create a cgroup for the job"));
  AddJsonFlag(app, json);
  app.add_flag("--torch-cap", torch_cap,
               Tr("PyTorch jobs: cap torch's allocator below the kill level "
                  "(set_per_process_memory_fraction), so the job gets a catchable OOM first"));
  AddRootFlag(app, root_dir);
  AddJournalFlag(app, journal_flag);
  app.add_flag("--no-journal", no_journal, Tr("do not record the run"));
  app.add_option("command", command, Tr("the job, after --"));
  return defined;
}

int RunGuardCommand(const CliEnv& env, CommandFlags& given_flags) {
  auto& [app, min_available, warn_available, require_available, grace, events_path, root_dir, pid,
         journal_flag, no_journal, json, psi_kill, no_cgroup, torch_cap, command] =
      FlagsOf<GuardCommandFlags>(given_flags);
  const SysRoot root(root_dir.empty() ? env.default_root : std::filesystem::path(root_dir));
  try {
    if (command.empty() == pid.empty()) {
      throw UsageError{Tr("give a command after -- or --pid PID (one of them)")};
    }
    auto info = ReadMemInfo(root);
    if (!info) throw UsageError{info.error().message};
    const uint64_t total = info->total_bytes().value_or(0);
    const auto available = info->available_bytes();
    if (!available)
      throw UsageError{
          Tr("proc/meminfo has no MemAvailable (kernel before 3.14); the guard needs it")};
    GuardOptions opt;
    // The flags, else the configuration (HEADROOM_KILL_LEVEL, [guard] kill_level, ...),
    // else the larger of 4 GiB and 8 % and twice that.
    opt.min_available_bytes = KillLevelBytes(env, min_available, "--min-available", total);
    opt.warn_available_bytes =
        WarnLevelBytes(env, warn_available, "--warn-available", total, opt.min_available_bytes);
    auto g = ParseDuration(grace, true);
    if (!g) throw UsageError{"--grace: " + g.error().message};
    opt.grace = std::chrono::duration_cast<std::chrono::milliseconds>(*g);
    opt.psi_kill = psi_kill;
    opt.use_cgroup = !no_cgroup;
    opt.command = command;
    if (!pid.empty()) {
      auto p = ParsePositiveInt(pid);
      if (!p || *p > (1 << 22)) throw UsageError{TrFormat("--pid: '{}' is not a process id", pid)};
      opt.attach_pid = static_cast<pid_t>(*p);
    }
    if (!require_available.empty()) {
      const uint64_t need = SizeOrPercentFlag(require_available, total, "--require-available");
      if (*available < need) {
        std::fprintf(env.err, "headroom: guard: %s\n",
                     TrFormat("refusing to start: MemAvailable {} is below --require-available {}",
                              FormatGiB(*available), FormatGiB(need))
                         .c_str());
        const auto leftovers = FindLeftovers(root);
        if (leftovers.empty()) {
          std::fprintf(
              env.err, "  %s\n",
              Tr("no known holders of the pool found (vllm, ollama, ray::, python with torch)"));
        }
        PrintLeftovers(env.err, leftovers);
        std::fprintf(env.err, "  %s\n",
                     Tr("(nothing was signalled; stop them yourself, e.g. kill PID)"));
        return kExitRefused;
      }
    }
    std::optional<TorchCap> cap;
    if (torch_cap) {
      if (opt.attach_pid)
        throw UsageError{Tr("--torch-cap: applies to a job started by the guard, not --pid")};
      const char* tmp = std::getenv("TMPDIR");
      const char* pythonpath = std::getenv("PYTHONPATH");
      const uint64_t cap_bytes =
          *available > opt.min_available_bytes ? *available - opt.min_available_bytes : 0;
      auto installed =
          InstallTorchCap(tmp && *tmp ? tmp : "/tmp", cap_bytes, pythonpath ? pythonpath : "");
      if (!installed) throw UsageError{installed.error().message};
      cap = std::move(*installed);
      opt.extra_env = cap->env;
    }
    std::FILE* events_file = nullptr;
    if (!events_path.empty()) {
      events_file = std::fopen(events_path.c_str(), "ae");
      if (!events_file) {
        throw UsageError{
            TrFormat("--events: cannot open {}: {}", events_path, std::strerror(errno))};
      }
    }
    // The journal records the run; a journal that cannot be opened or written is a note,
    // never a reason to leave the job unguarded.
    std::optional<Journal> journal;
    std::optional<int64_t> run_id;
    std::string journal_note;
    if (!no_journal) {
      auto path = JournalPath(env, journal_flag);
      auto opened = path ? Journal::Open(*path) : Result<Journal>(path.error());
      if (opened) {
        journal.emplace(std::move(*opened));
        std::vector<std::string> recorded = command;
        if (recorded.empty()) recorded = {"--pid", pid};
        auto id = journal->BeginRun(RunKind::kGuard, recorded, std::chrono::system_clock::now());
        if (id)
          run_id = *id;
        else
          journal_note = id.error().message;
        // Who guards, where, at which levels: what `headroom top` shows while the run lasts
        // (run/guard_record.h). The identity is read from the real /proc, not --root's.
        if (run_id) {
          auto added =
              RecordGuardStart(*journal, *run_id,
                               ThisGuardStart(SysRoot(env.default_root), opt.min_available_bytes,
                                              opt.warn_available_bytes));
          if (!added) journal_note = added.error().message;
        }
      } else {
        journal_note = opened.error().message;
      }
    }
    GuardEvents events(events_file);
    // What RunGuard records is English by construction (the --events lines, the summary's
    // reasons and cgroup); its notes and warning lines are messages, rendered here for the
    // terminal and by GuardSummaryJson in English for the journal and --json.
    auto summary = RunGuard(root, opt, events, [&](const Message& line) {
      std::fprintf(env.err, "%s\n", TranslatedText(line).c_str());
    });
    if (events_file) std::fclose(events_file);
    if (cap) cap->Remove();
    if (!summary) {
      if (journal && run_id) {
        (void)journal->FinishRun(*run_id, "error", kExitUsage, "",
                                 std::chrono::system_clock::now());
      }
      throw UsageError{summary.error().message};
    }
    if (journal && run_id) {
      const std::string status = summary->killed ? "killed-by-guard" : "exited";
      auto done = journal->FinishRun(
          *run_id, status, summary->exit_status,
          GuardSummaryJson(*summary, opt.min_available_bytes, opt.warn_available_bytes).dump(),
          std::chrono::system_clock::now());
      if (!done) journal_note = done.error().message;
    }
    if (!journal_note.empty()) {
      // Not in the journal, by definition: the note goes to --json's notes and the screen.
      // The journal's own message is in the user's language in both (with --json, English).
      summary->notes.push_back(Msg("not recorded in the journal: {}", journal_note));
    }
    if (json) {
      std::fprintf(env.out, "%s\n",
                   GuardSummaryJson(*summary, opt.min_available_bytes, opt.warn_available_bytes)
                       .dump(2)
                       .c_str());
    } else {
      PrintGuardSummary(env.err, *summary);
      for (const auto& n : summary->notes) {
        std::fprintf(env.err, "headroom guard: %s\n",
                     TrFormat("note: {}", TranslatedText(n)).c_str());
      }
    }
    return summary->exit_status;
  } catch (const UsageError& e) {
    PrintError(env, "guard: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
