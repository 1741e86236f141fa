// `headroom doctor --compare A.json B.json ...`: the nodes' env-report.json files read (each a
// regular file, up to kMaxEnvReportBytes), lined up by doctor/fleet.h and printed (text, or
// --json in English). Errors are a UsageError naming --compare and the file.
#pragma once

#include <string>
#include <vector>

#include "cli/cli.h"

namespace headroom {

// The exit status of the verdict: 0 ready, 1 ready with warnings, 2 blocked. `gather_flags`:
// a flag of the machine's own checks was given too (--workload, --report, --config): refused.
int RunDoctorCompare(const CliEnv& env, const std::vector<std::string>& paths, bool json,
                     bool verbose, bool gather_flags);

}  // namespace headroom
