// `headroom guard`: flags (cli/guard_flags.h) -> GuardRequest -> GuardOptions and
// GuardedRunOptions (run/guard_request.h) -> RunGuardedJob -> one summary line (or JSON) and
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
#include "cli/guard_view.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "group/group_place.h"
#include "group/group_secret.h"
#include "run/guard.h"
#include "run/guard_group.h"
#include "run/guard_record.h"
#include "run/guard_request.h"
#include "run/guarded_run.h"
#include "run/python_flags.h"
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
  const uint64_t need = SizeOrPercentFlag(require_available, total, "--require-available");
  if (available >= need) return true;
  PrintGuardRefusal(env.err, available, need, FindLeftovers(root));
  return false;
}

// The value or, as a usage error, its message.
template <typename T>
T Usable(Result<T> result) {
  if (!result) throw UsageError{TranslatedText(result.error().what)};
  return std::move(result).value();
}

// The launcher variables the group is found from (group/group_place.h).
group::Environment LauncherEnvironment() {
  group::Environment env;
  for (const char* name : {"MASTER_ADDR", "MASTER_PORT", "NNODES", "NODE_RANK", "SLURM_JOB_ID",
                           "SLURM_NODEID", "SLURM_JOB_NUM_NODES", "SLURM_JOB_NODELIST"}) {
    if (const char* value = std::getenv(name)) env.emplace(name, value);
  }
  return env;
}

// The group's secret: --group-secret-file, else HEADROOM_GROUP_SECRET, else (rank 0 only) a
// fresh one, printed with how to share it.
std::string GroupSecret(const CliEnv& env, const GuardGroupRequest& r, uint16_t rank) {
  if (!r.secret_file.empty()) {
    auto secret = group::ReadGroupSecretFile(r.secret_file);
    if (!secret) throw UsageError{TranslatedText(secret.error().what)};
    return *secret;
  }
  if (const char* value = std::getenv("HEADROOM_GROUP_SECRET"); value && *value) {
    return Usable(group::GroupSecretFromValue(value, "HEADROOM_GROUP_SECRET"));
  }
  if (rank != 0) {
    throw UsageError{
        Tr("--group: no secret: give --group-secret-file F or HEADROOM_GROUP_SECRET "
           "(the same on every node)")};
  }
  std::string made = Usable(group::GenerateGroupSecret());
  std::fprintf(env.err, "headroom guard: %s\n",
               TrFormat("no group secret given: made one; start the other nodes' guards with "
                        "HEADROOM_GROUP_SECRET={} (or put it in a file of mode 0600 and give "
                        "--group-secret-file)",
                        made)
                   .c_str());
  return made;
}

// The guard group this node joins (nullptr without --group). `lost`: a member found no
// coordinator within --group-wait (printed; the guard exits kExitGroupPeerLost).
std::unique_ptr<GuardGroup> StartGroup(const CliEnv& env, const GuardGroupRequest& r, bool& lost) {
  auto settings = Usable(GuardGroupSettingsFor(r, LauncherEnvironment()));
  if (!settings) return nullptr;
  auto address = group::ResolveIPv4(settings->host);
  if (!address) throw UsageError{TrFormat("--group: {}", TranslatedText(address.error().what))};
  settings->host = *address;
  settings->secret = GroupSecret(env, r, settings->node_rank);
  auto started = GuardGroup::Start(*settings);
  if (!started && settings->node_rank != 0 && started.error().errno_value != 0) {
    PrintError(env, "guard: " + TranslatedText(started.error().what));
    lost = true;
    return nullptr;
  }
  if (!started) throw UsageError{TranslatedText(started.error().what)};
  return std::move(*started);
}

// --hooks with a Python interpreter that will never run its sitecustomize (run/python_flags.h):
// one line, so the user knows the job runs without the companion's hooks.
void SayWhenHooksCannotApply(const CliEnv& env, const GuardRequest& request) {
  if (!request.hooks) return;
  const auto flag = PythonFlagSkippingHooks(request.command);
  if (!flag) return;
  const std::string line =
      *flag == "-S"
          ? TrFormat(
                "--hooks: the job's python runs with {} (no site module), so the hooks' "
                "sitecustomize never runs: no step records or saves from --hooks",
                *flag)
          : TrFormat(
                "--hooks: the job's python runs with {} (PYTHONPATH ignored), so the hooks' "
                "sitecustomize is never found: no step records or saves from --hooks",
                *flag);
  std::fprintf(env.err, "headroom guard: %s\n", line.c_str());
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
    GuardOptions guard = Usable(GuardOptionsFor(request));
    if (!RoomToStart(env, root, f.require_available, total, *available)) return kExitRefused;
    bool lost = false;
    const std::unique_ptr<GuardGroup> group = StartGroup(env, request.group, lost);
    if (lost) return kExitGroupPeerLost;
    guard.group = group.get();
    // The identity is read from the real /proc, not --root's.
    GuardStartRecord who = ThisGuardStart(SysRoot(env.default_root), guard.min_available_bytes,
                                          guard.warn_available_bytes);
    const GuardedRunOptions o =
        Usable(GuardedRunFor(request, std::move(guard), *available, std::move(who)));
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
