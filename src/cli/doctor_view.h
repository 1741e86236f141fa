// doctor's report for the terminal, in the user's language: the platform, one line per
// check (details for fail / warn / skip, or all with --verbose), the workload's plan and the
// verdict. env-report.json and --json are the library's (doctor/checks.h ReportJson).
#pragma once

#include <string>
#include <vector>

#include "cli/cli.h"
#include "doctor/checks.h"
#include "doctor/fleet.h"

namespace headroom {

// The report, then "report: PATH" when env-report.json was written (`report_path` not empty).
void PrintDoctorReport(const CliEnv& env, const DoctorFacts& facts,
                       const std::vector<CheckResult>& checks, DoctorVerdict verdict, bool verbose,
                       const std::string& report_path);

// doctor --compare: the nodes, one line per check (F1-F5) and the verdict.
void PrintCompareReport(const CliEnv& env, const std::vector<NodeReport>& nodes,
                        const std::vector<CheckResult>& checks, DoctorVerdict verdict,
                        bool verbose);

// doctor --peer: this node's rank, one line per check (L1, L2) and the verdict.
void PrintLinkReport(const CliEnv& env, int rank, int world, const std::vector<CheckResult>& checks,
                     DoctorVerdict verdict, bool verbose);

// On stderr, where it is a terminal: G5's copies are about to take a second.
void PrintBandwidthNotice(const CliEnv& env);

}  // namespace headroom
