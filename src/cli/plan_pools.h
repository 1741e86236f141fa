// plan's pools on the command line: --target (a machine that is not this one) and the
// device's memory read from NVML (--nvml-lib), laid on the resolved inputs before the plan is
// made, and judged after (plan/pools.h).
#pragma once

#include <optional>
#include <string>

#include "cli/cli.h"
#include "cli/plan_args.h"
#include "plan/plan_request.h"
#include "plan/pools.h"

namespace CLI {
class App;
}

namespace headroom {

struct PlanPoolFlags {
  std::string target;    // --target gb10 | discrete:SIZE | a card name
  std::string nvml_lib;  // --nvml-lib FILE
};

void AddPlanPoolFlags(CLI::App& app, PlanPoolFlags& flags);

// What the plan is judged against besides the host budget.
struct PlanPools {
  std::optional<PlanTarget> target;
  std::optional<DevicePool> device;  // discrete: the device's memory, when known
  bool host_known = true;            // false: a discrete --target without --budget
};

// --target checked (UsageError naming the flag; a --platform that says otherwise is a
// conflict), the platform decided (--target, else --platform or [platform] kind, else NVML:
// a device that reports its own memory is discrete) and laid on `in`: the footprint's
// platform, a Spark's profile budget for --target gb10, the device pool. NVML is read only
// for this machine: not under --root (or a default root that is not /) unless --nvml-lib or
// $HEADROOM_NVML_LIB names the library.
PlanPools ResolvePlanPools(const PlanPoolFlags& flags, const PlanFlags& fl, const CliEnv& env,
                           PlanInputs* in);

}  // namespace headroom
