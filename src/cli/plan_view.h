// plan's tables for the terminal, in the user's language: the plan (footprint terms, budget,
// verdict, anchor, advice and notes), the measured anchors beside it, and --list-models.
// plan --json is the library's (plan/plan.h PlanToJson, plan/measured_anchors.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "plan/measured_anchors.h"
#include "plan/plan.h"
#include "plan/pools.h"
#include "plan/run_config.h"

namespace headroom {

// The pools the plan was judged against (plan/pools.h JudgePools), the device's memory and
// the --target, for the verdict lines and the budget.
struct PlanPoolView {
  std::vector<PoolJudgement> pools;
  std::optional<DevicePool> device;
  std::optional<PlanTarget> target;
};

// Unified memory: one verdict line, the host pool's. A discrete GPU: the plan's verdict,
// then one line per pool (device, host), each with its own verdict.
void PrintPlan(const CliEnv& env, const PlanResult& plan, const PlanPoolView& pools = {});
// plan --from's lines: the file, its format and base model, and the keys not modelled.
void PrintRunConfig(const CliEnv& env, const RunConfig& config, const std::string& file);
void PrintLocalAnchors(const CliEnv& env, const std::vector<ShownAnchor>& anchors);
void PrintCatalog(const CliEnv& env);

}  // namespace headroom
