// guard's group and --hooks setup (cli/guard_group_setup.h), apart from the command's flow.
#include "cli/guard_group_setup.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "cli/i18n.h"
#include "cli/message_text.h"
#include "group/group_place.h"
#include "group/group_secret.h"
#include "guard/python_flags.h"

namespace headroom {
namespace {

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

}  // namespace

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

}  // namespace headroom
