// `headroom guard`: flags -> GuardOptions -> RunGuard -> one summary line (or JSON) and
// the job's exit status (kExitGuardKilled when the guard killed it).
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/duration.h"
#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/guard_view.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "run/guard.h"
#include "run/guard_record.h"
#include "run/guarded_run.h"
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

namespace {

// The flags, else the configuration (HEADROOM_KILL_LEVEL, [guard] kill_level, ...), else
// the larger of 4 GiB and 8 % and twice that.
GuardOptions OptionsFromFlags(const CliEnv& env, const GuardCommandFlags& f, uint64_t total) {
  GuardOptions opt;
  opt.min_available_bytes = KillLevelBytes(env, f.min_available, "--min-available", total);
  opt.warn_available_bytes =
      WarnLevelBytes(env, f.warn_available, "--warn-available", total, opt.min_available_bytes);
  auto g = ParseDuration(f.grace, true);
  if (!g) throw UsageError{"--grace: " + TranslatedText(g.error().what)};
  opt.grace = std::chrono::duration_cast<std::chrono::milliseconds>(*g);
  opt.psi_kill = f.psi_kill;
  opt.use_cgroup = !f.no_cgroup;
  opt.command = f.command;
  if (!f.pid.empty()) {
    auto p = ParsePositiveInt(f.pid);
    if (!p || *p > (1 << 22)) throw UsageError{TrFormat("--pid: '{}' is not a process id", f.pid)};
    opt.attach_pid = static_cast<pid_t>(*p);
  }
  return opt;
}

// --require-available: false when MemAvailable is below it (the refusal is printed, with
// the usual holders of the pool).
bool RoomToStart(const CliEnv& env, const SysRoot& root, const std::string& require_available,
                 uint64_t total, uint64_t available) {
  if (require_available.empty()) return true;
  const uint64_t need = SizeOrPercentFlag(require_available, total, "--require-available");
  if (available >= need) return true;
  PrintGuardRefusal(env.err, available, need, FindLeftovers(root));
  return false;
}

// The run's options beside the guard's: --events, --torch-cap, the journal's record.
GuardedRunOptions RunOptions(const CliEnv& env, const GuardCommandFlags& f, GuardOptions guard,
                             uint64_t available) {
  GuardedRunOptions o;
  if (f.torch_cap) {
    if (guard.attach_pid)
      throw UsageError{Tr("--torch-cap: applies to a job started by the guard, not --pid")};
    const char* tmp = std::getenv("TMPDIR");
    const char* pythonpath = std::getenv("PYTHONPATH");
    o.torch_cap = GuardedRunOptions::TorchCapRequest{
        available > guard.min_available_bytes ? available - guard.min_available_bytes : 0,
        tmp && *tmp ? tmp : "/tmp", pythonpath ? pythonpath : ""};
  }
  o.events_path = f.events_path;
  if (!f.no_journal) o.journal = JournalPath(env, f.journal_flag);
  o.recorded_command = f.command.empty() ? std::vector<std::string>{"--pid", f.pid} : f.command;
  // The identity is read from the real /proc, not --root's.
  o.guard_start = ThisGuardStart(SysRoot(env.default_root), guard.min_available_bytes,
                                 guard.warn_available_bytes);
  o.guard = std::move(guard);
  return o;
}

}  // namespace

int RunGuardCommand(const CliEnv& env, CommandFlags& given_flags) {
  auto& f = FlagsOf<GuardCommandFlags>(given_flags);
  const SysRoot root(f.root_dir.empty() ? env.default_root : std::filesystem::path(f.root_dir));
  try {
    if (f.command.empty() == f.pid.empty()) {
      throw UsageError{Tr("give a command after -- or --pid PID (one of them)")};
    }
    auto info = ReadMemInfo(root);
    if (!info) throw UsageError{TranslatedText(info.error().what)};
    const uint64_t total = info->total_bytes().value_or(0);
    const auto available = info->available_bytes();
    if (!available)
      throw UsageError{
          Tr("proc/meminfo has no MemAvailable (kernel before 3.14); the guard needs it")};
    GuardOptions guard = OptionsFromFlags(env, f, total);
    if (!RoomToStart(env, root, f.require_available, total, *available)) return kExitRefused;
    const GuardedRunOptions o = RunOptions(env, f, std::move(guard), *available);
    // What RunGuard records is English by construction (the --events lines, the summary's
    // reasons and cgroup); its notes and warning lines are messages, rendered here for the
    // terminal and by GuardSummaryJson in English for the journal and --json.
    // A closed stderr (a `tee` that died) is a note, never the guard's end (docs/guard.md).
    std::signal(SIGPIPE, SIG_IGN);
    auto summary = RunGuardedJob(root, o, [&](const Message& line) {
      return std::fprintf(env.err, "%s\n", TranslatedText(line).c_str()) >= 0;
    });
    if (!summary) throw UsageError{TranslatedText(summary.error().what)};
    if (f.json) {
      std::fprintf(
          env.out, "%s\n",
          GuardSummaryJson(*summary, o.guard.min_available_bytes, o.guard.warn_available_bytes)
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
