// `headroom guard`: flags (cli/guard_flags.h) -> GuardRequest -> GuardOptions and
// GuardedRunOptions (guard/guard_request.h) -> RunGuardedJob -> one summary line (or JSON) and
// the job's exit status (kExitGuardKilled when the guard killed it).
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli.h"
#include "cli/config_defaults.h"
#include "cli/guard_flags.h"
#include "cli/guard_group_setup.h"
#include "cli/guard_view.h"
#include "cli/i18n.h"
#include "cli/level_flag.h"
#include "cli/message_text.h"
#include "guard/guard.h"
#include "guard/guard_group.h"
#include "guard/guard_record.h"
#include "guard/guard_request.h"
#include "guard/guarded_run.h"
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
          "With --group on every node of a multi-node job, the guards end the whole job together "
          "when one node runs out of memory, fails or freezes (docs/guard-group.md).\n\n"
          "exit status: the job's own (its exit code, or 128 + signal); {} when the guard killed "
          "it; {} when --require-available refused to start; with --group, {} when another node "
          "ran out of memory, {} when another node's job failed, {} when another node was lost; "
          "2 usage error",
          kExitGuardKilled, kExitRefused, kExitGroupPeerMemory, kExitGroupPeerFailed,
          kExitGroupPeerLost),
      "headroom guard"};
  GuardFlags fl;
  CLI::App& App() override { return app; }
};

}  // namespace

std::unique_ptr<CommandFlags> DefineGuardFlags() {
  auto defined = std::make_unique<GuardCommandFlags>();
  AddGuardFlags(defined->app, defined->fl);
  return defined;
}

namespace {

// --require-available: false when MemAvailable is below it (the refusal is printed, with
// the usual holders of the pool).
bool RoomToStart(const CliEnv& env, const SysRoot& root, const std::string& require_available,
                 uint64_t total, uint64_t available) {
  if (require_available.empty()) return true;
  const uint64_t need = PoolAmountFlag(require_available, total, "--require-available");
  if (available >= need) return true;
  PrintGuardRefusal(env.err, available, need, FindLeftovers(root));
  return false;
}

}  // namespace

int RunGuardCommand(const CliEnv& env, CommandFlags& given_flags) {
  GuardFlags& f = FlagsOf<GuardCommandFlags>(given_flags).fl;
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
    const GuardRequest request = GuardRequestFromFlags(env, f, total);
    auto options = GuardOptionsFor(request);
    if (!options) throw UsageError{TranslatedText(options.error().what)};
    GuardOptions guard = std::move(options).value();
    if (!RoomToStart(env, root, f.require_available, total, *available)) return kExitRefused;
    bool lost = false;
    const std::unique_ptr<GuardGroup> group = StartGroup(env, request.group, lost);
    if (lost) return kExitGroupPeerLost;
    guard.group = group.get();
    // The identity is read from the real /proc, not --root's.
    GuardStartRecord who = ThisGuardStart(SysRoot(env.default_root), guard.min_available_bytes,
                                          guard.warn_available_bytes);
    auto ran = GuardedRunFor(request, std::move(guard), *available, std::move(who));
    if (!ran) throw UsageError{TranslatedText(ran.error().what)};
    const GuardedRunOptions o = std::move(ran).value();
    SayWhenHooksCannotApply(env, request);
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
    }
    if (summary->group_end) {
      std::fprintf(env.err, "headroom guard: %s\n",
                   TranslatedText(GroupEndMessage(*summary->group_end, group->settings().node_rank))
                       .c_str());
    }
    return summary->exit_status;
  } catch (const UsageError& e) {
    PrintError(env, "guard: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
