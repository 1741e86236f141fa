// plan --sharding pipeline: the run split by layers over --devices nodes, with --schedule and
// --microbatches (plan/pipeline.h); one row per stage against its node's budget.
#pragma once

#include <cstdio>
#include <optional>
#include <string>

#include "cli/cli.h"
#include "cli/plan_args.h"
#include "plan/pipeline.h"
#include "plan/plan_request.h"

namespace CLI {
class App;
}

namespace headroom {

struct PipelineFlags {
  std::string schedule;      // --schedule 1f1b|gpipe|interleaved; "" = 1f1b
  std::string microbatches;  // --microbatches M; "" = the number of devices
};

void AddPipelineFlags(CLI::App& app, PipelineFlags& flags);

// What plan runs when --sharding pipeline is given: the stages' configuration, with `*fl`
// changed to one device running one micro-batch (--batch / M), which ResolvePlanInputs then
// reads. nullopt without --sharding pipeline. Throws UsageError (one line, translated) on
// --schedule or --microbatches without it, --devices below 2, --microbatches below 1, a
// --batch that M does not divide, a schedule PyTorch refuses.
std::optional<PipelineConfig> TakePipeline(PlanFlags* fl, const PipelineFlags& flags);

// The stages as a table (or plan --json's "stages"); the exit status: kExitNegative when a
// stage does not fit.
int PrintPipelinePlan(const CliEnv& env, const PlanInputs& in, const PipelineConfig& c, bool json);

}  // namespace headroom
