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
#include "base/messages.h"
#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "run/guard.h"
#include "run/guard_record.h"
#include "run/torch_cap.h"
#include "store/journal.h"
#include "sys/meminfo.h"
#include "sys/processes.h"

namespace headroom {
namespace {

std::string GiB(uint64_t b) { return FormatGiB(b); }

// The summary line, for people (SummaryJson is the record). The kill reason and the signal
// path are identifiers (the events file and summary_json have the same words): English.
void PrintSummary(std::FILE* out, const GuardSummary& s) {
  std::string head;
  if (s.killed) {
    // TRANSLATORS: optional clauses inside "killed the job (...)", after the signal path.
    const std::string signal_after =
        s.crossing_to_signal_ms
            ? TrFormat("; signal {:.1f} ms after the reading", *s.crossing_to_signal_ms)
            : "";
    const std::string empty_after =
        s.crossing_to_empty_ms ? TrFormat(", empty tree after {:.0f} ms", *s.crossing_to_empty_ms)
                               : "";
    // TRANSLATORS: {0} is the kill reason (e.g. memavailable), {2} how the job was signalled;
    // {3} and {4} are the optional clauses above, or empty.
    head = TrFormat("killed the job ({0}: MemAvailable {1} against the level; {2}{3}{4})",
                    s.kill_reason, GiB(s.trigger_available_bytes.value_or(0)), s.signal_path,
                    signal_after, empty_after);
  } else if (s.job_exit_code) {
    head = TrFormat("job exited with status {}", *s.job_exit_code);
  } else if (s.job_signal) {
    head = TrFormat("job died of signal {}", *s.job_signal);
  } else {
    head = Tr("job ended");
  }
  // TRANSLATORS: guard's closing line; {0} is one of "killed the job (...)", "job exited with
  // status N", "job died of signal N", "job ended".
  std::fprintf(
      out, "%s\n",
      TrFormat("headroom guard: {0} after {1:.1f} s; lowest MemAvailable {2}; peak pool use {3} "
               "(MemTotal - lowest MemAvailable); peak job RSS {4} (GPU memory on unified memory "
               "is not in RSS); cgroup peak {5}; MemAvailable after {6}",
               head, s.duration_s, GiB(s.lowest_available_bytes), GiB(s.peak_pool_use_bytes),
               GiB(s.peak_tree_rss_bytes),
               s.cgroup_peak_bytes ? GiB(*s.cgroup_peak_bytes) : Tr("n/a"),
               s.available_after_bytes ? GiB(*s.available_after_bytes) : Tr("n/a"))
          .c_str());
}

nlohmann::json SummaryJson(const GuardSummary& s, uint64_t level, uint64_t warn) {
  auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {
      {"schema_version", 1},
      {"killed_by_guard", s.killed},
      {"kill_reason", s.killed ? nlohmann::json(s.kill_reason) : nlohmann::json(nullptr)},
      {"signal_path", s.killed ? nlohmann::json(s.signal_path) : nlohmann::json(nullptr)},
      {"exit_status", s.exit_status},
      {"job_exit_code", opt(s.job_exit_code)},
      {"job_signal", opt(s.job_signal)},
      {"duration_s", s.duration_s},
      {"kill_below_bytes", level},
      {"warn_below_bytes", warn},
      {"mem_total_bytes", s.mem_total_bytes},
      {"start_available_bytes", s.start_available_bytes},
      {"lowest_available_bytes", s.lowest_available_bytes},
      {"peak_pool_use_bytes", s.peak_pool_use_bytes},
      {"peak_tree_rss_bytes", s.peak_tree_rss_bytes},
      {"cgroup_peak_bytes", opt(s.cgroup_peak_bytes)},
      {"trigger_available_bytes", opt(s.trigger_available_bytes)},
      {"crossing_to_signal_ms", opt(s.crossing_to_signal_ms)},
      {"crossing_to_empty_ms", opt(s.crossing_to_empty_ms)},
      {"available_after_bytes", opt(s.available_after_bytes)},
      {"cgroup", s.cgroup},
      {"warnings", s.warnings},
      {"polls", s.polls},
      {"notes", s.notes},
  };
}

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
    // RunGuard keeps what it records English by construction (the --events lines, and the
    // summary's notes, reasons and cgroup that the journal's summary_json and history --json
    // hold) and gives its notes again in the user's language (shown_notes); its warning
    // lines on stderr and its errors are in the user's language.
    auto summary = RunGuard(root, opt, events, env.err);
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
          SummaryJson(*summary, opt.min_available_bytes, opt.warn_available_bytes).dump(),
          std::chrono::system_clock::now());
      if (!done) journal_note = done.error().message;
    }
    if (!journal_note.empty()) {
      // Not in the journal, by definition: the note goes to --json's notes and the screen.
      // The journal's own message is in the user's language in both (with --json, English).
      TextPair note = TrPair(N_("not recorded in the journal: {}"), journal_note);
      summary->notes.push_back(std::move(note.english));
      summary->shown_notes.push_back(std::move(note.shown));
    }
    if (json) {
      std::fprintf(
          env.out, "%s\n",
          SummaryJson(*summary, opt.min_available_bytes, opt.warn_available_bytes).dump(2).c_str());
    } else {
      PrintSummary(env.err, *summary);
      for (const auto& n : summary->shown_notes) {
        std::fprintf(env.err, "headroom guard: %s\n", TrFormat("note: {}", n).c_str());
      }
    }
    return summary->exit_status;
  } catch (const UsageError& e) {
    PrintError(env, "guard: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
