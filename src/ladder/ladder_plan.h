// The ladder's plan (steps 2 to 4, docs/ladder.md): the plan request a ladder's row holds,
// resolved against the machine, and the inputs the step engine reads (ladder/ladder_steps.h
// LadderInputs). Errors are message values, "--plan-args: ..." (the engine keeps them as
// evidence in English; `ladder start` shows them as a usage error in the user's language).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "base/message.h"
#include "ladder/ladder_advice.h"
#include "ladder/ladder_journal.h"
#include "ladder/ladder_steps.h"
#include "plan/plan_request.h"
#include "sys/sysroot.h"

namespace headroom {

// Reads plan's flags given as words, the form rows from before journal schema 5 hold; plan's
// flag definitions are the CLI's, so the caller supplies it. nullopt and `*error` when the
// words do not read.
using PlanWordsReader =
    std::function<std::optional<PlanRequest>(const std::string& words, Message* error)>;

// The ladder's plan request: its JSON form (LadderRow::plan_request), else the old form,
// plan_args read by `old_form`. nullopt and `*error` when it does not read.
std::optional<PlanRequest> LadderPlanRequest(const LadderRow& ladder,
                                             const PlanWordsReader& old_form, Message* error);

// The request resolved (ResolvePlanRequest); without a root or a budget in it, the budget is
// read below `context.default_root`. nullopt and `*error` ("--plan-args: ...") otherwise.
std::optional<LadderPlanInput> ResolveLadderPlan(const PlanRequest& request,
                                                 const PlanContext& context, Message* error);

// What the step engine reads: proc/meminfo below `root`, and a ladder's plan by
// LadderPlanRequest then ResolveLadderPlan (in `context`, whose default root is `root`).
LadderInputs LadderInputsFor(const SysRoot& root, PlanContext context, PlanWordsReader old_form);

// A new ladder's row for `ladder start`: `match` defaults to the job's name, and a plan
// request is stored in its JSON form beside the words it was given as.
LadderRow NewLadderRow(const std::string& job, LadderSymptom symptom, const std::string& match,
                       const std::string& plan_args, const std::optional<PlanRequest>& request);

}  // namespace headroom
