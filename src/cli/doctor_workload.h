// doctor --workload at the edge: plan's own words planned once for G3's headroom.
#pragma once

#include <string>

#include "cli/cli.h"
#include "doctor/workload.h"
#include "sys/sysroot.h"

namespace headroom {

// --workload: planned once, its budget read below --root; a "from FILE" / "--from FILE" in it
// is read once, and the keys it has that the plan does not model are noted.
WorkloadFacts PlanDoctorWorkload(const CliEnv& env, const std::string& workload,
                                 const SysRoot& root);

}  // namespace headroom
