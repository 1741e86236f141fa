#include "doctor/workload.h"

#include "plan/plan.h"

namespace headroom {

WorkloadFacts PlanWorkloadFacts(const std::string& description, const PlanInputs& in) {
  const PlanResult plan = MakePlan(in.spec, in.workload, in.budget, in.options);
  WorkloadFacts w;
  w.description = description;
  w.peak_bytes = plan.footprint.peak_bytes();
  w.budget_bytes = plan.budget.budget_bytes;
  w.verdict = std::string(Name(plan.verdict));
  // TRANSLATORS: doctor's workload line: model, method, batch, seq, the plan's peak, the
  // budget and where it came from (/proc/meminfo or --budget), then the verdict.
  w.plan_line =
      Msg("{0} {1}, batch {2}, seq {3}: peak {4} against a budget of {5} ({6}): {7}", in.spec.name,
          Name(in.workload.method), in.workload.batch, in.workload.seq, GiB(w.peak_bytes),
          GiB(w.budget_bytes), plan.budget.source, VerdictWord(plan.verdict));
  for (const auto& a : plan.advice) w.advice.push_back(a.text);
  return w;
}

}  // namespace headroom
