// `headroom guard`'s flags (docs/guard.md): the variables its options write, their
// definitions, and the request they make (guard/guard_request.h), the levels taken from the
// flags or the configuration. Errors are UsageError naming the flag (exit 2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "guard/guard_group.h"
#include "guard/guard_request.h"

namespace CLI {
class App;
}

namespace headroom {

struct GuardFlags {
  std::string min_available, warn_available, require_available, grace = "3s", events_path, root_dir,
                                                                pid;
  std::string journal_flag;
  bool no_journal = false;
  bool json = false, psi_kill = false, no_cgroup = false, torch_cap = false;
  // The companion and the checkpoint before the kill (docs/companion.md).
  std::string step_records, checkpoint_grace, checkpoint_signal = "SIGUSR1", checkpoint_request;
  bool no_checkpoint = false, hooks = false;
  std::vector<std::string> command;
  // --group, --node-rank, --nodes, --group-secret-file, --heartbeat, --heartbeat-timeout,
  // --group-wait (docs/guard-group.md).
  GuardGroupRequest group;
};

// Every option of guard's on `app`, in --help's order; the job is the positional after --.
void AddGuardFlags(CLI::App& app, GuardFlags& flags);

// The request the flags make: the kill and warning levels from them, else the configuration
// (HEADROOM_KILL_LEVEL, [guard] kill_level, ...), else the larger of 4 GiB and 8 % of
// `total` and twice that; the torch cap's place from TMPDIR and PYTHONPATH; the journal
// unless --no-journal.
GuardRequest GuardRequestFromFlags(const CliEnv& env, const GuardFlags& f, uint64_t total);

// Where the companion package (python/headroom) is, for --hooks: ../python beside a build
// tree inside the source tree, else the lib/python3*/dist-packages of the installed prefix,
// relative to the running binary; "" when none holds headroom/__init__.py.
std::string FindCompanionDir();

}  // namespace headroom
