// plan's tables for the terminal, in the user's language: the plan (footprint terms, budget,
// verdict, anchor, advice and notes), the measured anchors beside it, and --list-models.
// plan --json is the library's (plan/plan.h PlanToJson, plan/measured_anchors.h).
#pragma once

#include <string>
#include <vector>

#include "cli/cli.h"
#include "plan/measured_anchors.h"
#include "plan/plan.h"
#include "plan/run_config.h"

namespace headroom {

void PrintPlan(const CliEnv& env, const PlanResult& plan);
// plan --from's lines: the file, its format and base model, and the keys not modelled.
void PrintRunConfig(const CliEnv& env, const RunConfig& config, const std::string& file);
void PrintLocalAnchors(const CliEnv& env, const std::vector<ShownAnchor>& anchors);
void PrintCatalog(const CliEnv& env);

}  // namespace headroom
