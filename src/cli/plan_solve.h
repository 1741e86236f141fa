// plan --solve batch|seq|rank on the command line: the flag, its checks, the plans the search
// makes (each judged as plan judges one: MakePlan, then the pools) and the lines that say the
// answer (docs/plan.md "The largest that fits"; the search is plan/solve.h).
#pragma once

#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/plan_pools.h"
#include "plan/plan.h"
#include "plan/plan_request.h"
#include "plan/pools.h"
#include "plan/solve.h"

namespace CLI {
class App;
}

namespace headroom {

void AddPlanSolveFlag(CLI::App& app, std::string& solve);

// The plan of `in` as `plan` judges it: MakePlan, then the pools (JudgePools), whose
// judgements go to `*judged` when not null. plan and every plan of --solve are made by it.
PlanResult JudgedPlan(const PlanInputs& in, const PlanPools& pools,
                      std::vector<PoolJudgement>* judged = nullptr);

// What plan shows for --solve: the search, the plan shown (the answer's, or the plan at 1 when
// nothing fits) and its pools' judgements.
struct SolvedPlan {
  Solution solution;
  PlanResult shown;
  std::vector<PoolJudgement> judged;
};

// --solve TEXT checked (a knob, not given a value by a flag of its own, and one that moves the
// peak: each else a UsageError naming --solve) and solved with JudgedPlan.
SolvedPlan SolvePlan(const std::string& text, const PlanInputs& in, const PlanPools& pools);

// The answer, the plan at it and at the next value, and the term that stops the next.
void PrintSolution(const CliEnv& env, const Solution& s);

// 0 when a value fits, 1 when not even 1 does.
int SolveExitStatus(const Solution& s);

}  // namespace headroom
