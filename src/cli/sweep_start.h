// sweep --start N|plan and --plan-args on the command line (docs/sweep.md "Starting from the
// plan"): the first knob's first trial, given, or plan --solve's answer for the sweep's model
// judged against the room the sweep's own limit leaves (sweep/start.h). Errors are UsageError
// naming --start (exit 2), raised before the journal is opened.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/sweep_flags.h"
#include "sweep/start.h"
#include "sweep/sweep.h"
#include "sys/sysroot.h"

namespace CLI {
class App;
}

namespace headroom {

// The pool's use as the sweep reads it (sweep/sweep.cc): MemTotal less MemAvailable and the
// free pages on the per-CPU lists (sys/zoneinfo.h).
uint64_t SweepPoolUse(const SysRoot& root, uint64_t total, uint64_t available);

void AddSweepStartFlags(CLI::App& app, std::string& start, std::string& plan_args);

// --start (none when f.start is empty) for the options `o` (the grid, the limit), set in
// o->start, with f.plan_args laid over the plan the sweep's --model and --method describe, the
// grid's other knobs at their smallest. --start plan judges each plan's peak against the limit
// less the pool's use now (`pool_use_bytes`, read as the sweep reads it), or the device limit
// with --device-limit. The lines that say where the sweep starts (translated) are returned,
// for after the sweep's limit line (PrintSweepStartLines).
std::vector<std::string> ResolveSweepStart(const CliEnv& env, const SweepFlags& f,
                                           uint64_t pool_use_bytes, SweepOptions* o);

// Each line as "headroom: sweep: LINE".
void PrintSweepStartLines(std::FILE* err, const std::vector<std::string>& lines);

// "plan said batch 10, measured batch 12 (gap +2, +20 %)", or that the sweep found none;
// nothing when the start did not come from the plan.
void PrintPlanGap(std::FILE* out, const SweepOptions& o, const SweepResult& r);

}  // namespace headroom
