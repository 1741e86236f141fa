// What each step of the OOM ladder proposes, with the numbers behind it: meminfo figures
// for the flush (step 1) and the planner's answers for steps 2 to 4. Each comes as lines
// (message values, base/message.h: the journal stores them, the terminal translates them)
// and a JSON object stored in the journal as the step's evidence (data, English).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/message.h"
#include "ladder/ladder.h"
#include "model/model_spec.h"
#include "plan/budget.h"
#include "plan/footprint.h"
#include "plan/workload.h"
#include "sys/meminfo.h"

namespace headroom {

struct StepAdvice {
  std::vector<Message> lines;  // the journal's entry text (and, in English, its evidence)
  nlohmann::json evidence = nlohmann::json::object();
};

// The command a flush runs, as a person would type it.
inline constexpr const char* kFlushCommand = "sync; echo 3 > /proc/sys/vm/drop_caches";

// Step 1: Cached, Buffers, what a flush would free (MemInfo::reclaimable_page_cache_bytes)
// and the command.
StepAdvice FlushAdvice(const MemInfo& info);

// What the planner needs for steps 2 to 4.
struct LadderPlanInput {
  ModelSpec spec;
  Workload workload;
  Budget budget;  // the plan's: its judge (plan/verdict.h Judge) is the ladder's
  FootprintOptions options;
};

// Steps 2 to 4 from the plan: 2 the largest --seq, then --batch, that fit with the
// verdict's margin; 3 QLoRA -> bf16 LoRA (or the next cheaper method) with its plan; 4 a
// smaller model of the family, or a second machine.
StepAdvice PlanStepAdvice(int step, const LadderPlanInput& in);

// Steps 2 to 4 without --plan-args: what to do, without numbers.
StepAdvice UnplannedStepAdvice(int step);

}  // namespace headroom
