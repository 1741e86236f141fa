// doctor --workload: the plan of the workload, planned once, as the facts the report and
// the screen show (WorkloadFacts, doctor/checks.h): its peak, the budget, plan's verdict
// identifier, the plan line and advice as message values (English in env-report.json,
// translated on the terminal).
#pragma once

#include <string>

#include "doctor/checks.h"
#include "plan/plan_request.h"

namespace headroom {

WorkloadFacts PlanWorkloadFacts(const std::string& description, const PlanInputs& inputs);

}  // namespace headroom
