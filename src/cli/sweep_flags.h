// `headroom sweep`'s flags (docs/sweep.md): the variables its options write, their
// definitions, and what they mean as the options RunSweep takes (sweep/sweep.h), a flag not
// given taking its default (sweep/policy.h, the configured kill level). Errors are
// UsageError naming the flag (exit 2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "sweep/grid.h"
#include "sweep/sweep.h"

namespace CLI {
class App;
}

namespace headroom {

struct SweepFlags {
  std::string batch, seq, grad_accum, order, limit, margin, min_available, require_available;
  std::string trial_timeout, grace = "3s", settle_timeout = "60s", settle_tolerance, state, logs,
                             csv, root_dir;
  std::string model, method;
  std::string device_limit, platform;  // cli/sweep_device_flag.h
  std::string start, plan_args;        // cli/sweep_start.h
  std::vector<std::string> params, command;
  int max_trials = 30;
  bool no_bisect = false, fresh = false, kill_leftovers = false, json = false;
};

// Every option of sweep's on `app`, in --help's order; the command template is the
// positional after --.
void AddSweepFlags(CLI::App& app, SweepFlags& flags);

// The options RunSweep takes, less the log folder and the guard's record, which need the
// journal; `total` is MemTotal, the base of a percentage.
SweepOptions SweepOptionsFromFlags(const CliEnv& env, const SweepFlags& f, Grid grid,
                                   uint64_t total);

}  // namespace headroom
