// Test helpers (tests only): the plans and ladder inputs that several suites share, so a
// translated-output test and the module's own test look at the same case.
#pragma once

#include <cstdint>

#include "ladder/ladder_advice.h"
#include "model/catalog.h"
#include "plan/plan.h"

namespace headroom::testing {

// A 70B full fine-tune against 100 GB: does not fit, with advice.
inline PlanResult OverBudget() {
  Workload w;
  w.method = Method::kFull;
  w.weight_dtype = DefaultWeightDType(Method::kFull);
  return MakePlan(*FindModel("llama-3.1-70b"), w, BudgetFromSize(100'000'000'000ULL, std::nullopt),
                  {});
}

// Llama 3.1 8B with `method` at seq x batch against `budget_bytes`: the ladder's step-2 input.
inline LadderPlanInput Over(Method method, int64_t seq, int64_t batch, uint64_t budget_bytes) {
  LadderPlanInput in;
  in.spec = *FindModel("llama-3.1-8b");
  in.workload.method = method;
  in.workload.weight_dtype = DefaultWeightDType(method);
  in.workload.seq = seq;
  in.workload.batch = batch;
  in.budget = BudgetFromSize(budget_bytes, std::nullopt);
  return in;
}

}  // namespace headroom::testing
