// doctor's report for the terminal, in the user's language: the platform, one line per
// check (details for fail / warn / skip, or all with --verbose), the workload's plan and the
// verdict. env-report.json and --json are the library's (doctor/checks.h ReportJson).
#pragma once

#include <vector>

#include "cli/cli.h"
#include "doctor/checks.h"

namespace headroom {

void PrintDoctorReport(const CliEnv& env, const DoctorFacts& facts,
                       const std::vector<CheckResult>& checks, DoctorVerdict verdict, bool verbose);

}  // namespace headroom
