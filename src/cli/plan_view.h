// plan's tables for the terminal, in the user's language: the plan (footprint terms, budget,
// verdict, anchor, advice and notes), the measured anchors beside it, and --list-models.
// plan --json is the library's (plan/plan.h PlanToJson, plan/measured_anchors.h).
#pragma once

#include <vector>

#include "cli/cli.h"
#include "plan/measured_anchors.h"
#include "plan/plan.h"

namespace headroom {

void PrintPlan(const CliEnv& env, const PlanResult& plan);
void PrintLocalAnchors(const CliEnv& env, const std::vector<ShownAnchor>& anchors);
void PrintCatalog(const CliEnv& env);

}  // namespace headroom
