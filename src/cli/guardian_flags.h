// `headroom guardian`'s flags (docs/guardian.md): the variables its options write, their
// definitions, and the options they make (guardian/guardian_loop.h), the levels taken from
// the flags or the configuration. Errors are UsageError naming the flag (exit 2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "guardian/guardian_loop.h"

namespace CLI {
class App;
}

namespace headroom {

struct GuardianFlags {
  std::string min_available, warn_available, grace, events_path, journal_flag, nvml_lib, on_event;
  std::vector<std::string> only, protect, prefer;
  bool no_journal = false, dry_run = false, release_driver_pools = false, no_nvml = false,
       psi_kill = false, print_levels = false;
};

// Every option of guardian's on `app`, in --help's order.
void AddGuardianFlags(CLI::App& app, GuardianFlags& flags);

// The loop's options: the levels from the flags, else [guardian] in config.toml, else the
// guard's (the larger of 4 GiB and 8 % of `total`, and twice that); the grace (3 s); the
// scopes, patterns and switches.
GuardianOptions GuardianOptionsFromFlags(const CliEnv& env, const GuardianFlags& f, uint64_t total);

// SIGHUP: config.toml and HEADROOM_* read again, the options made again from the same flags
// into `o`. false (and `o` unchanged) when the configuration is broken or the levels are
// refused; `error` says why.
bool ReloadGuardianOptions(const CliEnv& env, const GuardianFlags& f, uint64_t total,
                           GuardianOptions& o, std::string& error);

}  // namespace headroom
