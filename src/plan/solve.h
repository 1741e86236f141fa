// plan --solve batch|seq|rank: the largest value of one knob whose plan fits (docs/plan.md
// "The largest that fits").
//
// The peak grows with the micro-batch, the sequence length and the LoRA rank, so the plan's
// verdict is "fits" up to some value and not past it: the search doubles from 1 until a plan
// does not fit, then bisects between the last that fit and the first that did not, about
// 2 log2(N) plans for an answer N. Each value is judged by the caller's plan, the same
// function that gives `plan` its verdict (MakePlan and the pools' judgement), so the answer
// and `plan --batch N` never disagree; nothing here judges a peak.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "base/message.h"
#include "plan/footprint.h"
#include "plan/plan.h"
#include "plan/plan_request.h"
#include "plan/workload.h"

namespace headroom {

enum class SolveKnob { kBatch, kSeq, kRank };

// "batch", "seq", "rank": the --solve spelling, and plan --json's solve.knob.
std::string_view Name(SolveKnob knob);
// The flag the knob sets: "--batch", "--seq", "--lora-rank".
std::string_view SolveKnobFlag(SolveKnob knob);
// Its field in plan/plan_fields' table (PlanSources' key): "batch", "seq", "lora_rank".
std::string_view SolveKnobField(SolveKnob knob);
// The largest value the knob's flag accepts (plan/plan_fields' bound): the search's ceiling.
int64_t SolveKnobMax(SolveKnob knob);

// "batch", "seq" or "rank"; anything else is nullopt with `*error` naming --solve and the
// three names.
std::optional<SolveKnob> ParseSolveKnob(std::string_view text, Message* error);

// The workload's value of the knob, to read or set.
int64_t& KnobValue(Workload& workload, SolveKnob knob);

// Whether the knob moves this plan's peak: the footprint's steady peak at the knob's 1 and
// 4096 differ. nullopt when it does; else the one-line reason, naming --solve (the LoRA rank of a
// full fine-tune trains no adapter).
std::optional<Message> KnobDoesNotMove(const ModelSpec& spec, const Workload& workload,
                                       const FootprintOptions& options, SolveKnob knob);

// The largest v in [1, max] with fits(v), for a fits that is true up to some value and false
// past it: doubling from 1, then bisection. 0 when fits(1) is false. `*evaluations` (when not
// null): how many times fits was called.
int64_t LargestThatFits(int64_t max, const std::function<bool(int64_t)>& fits,
                        int* evaluations = nullptr);

// What stops the next value: "load_peak" when the next plan's peak is its load peak; else
// the breakdown's term (Footprint::terms' key) that grows the most from `at` to `next`, the
// framework overhead only when nothing else grows (its allocator slack follows the peak, not
// the knob). `at` null (not even 1 fits): the largest term of `next`.
std::string LimitedBy(const Footprint* at, const Footprint& next);

struct Solution {
  SolveKnob knob = SolveKnob::kBatch;
  int64_t value = 0;               // the largest that fits; 0 when not even 1 does
  std::optional<PlanResult> at;    // the plan at value (none when value is 0)
  std::optional<PlanResult> next;  // the plan at value + 1 (none when value is the ceiling)
  std::string limited_by;          // LimitedBy; "ceiling" when value is SolveKnobMax
  int plans = 0;                   // plans made by the search
};

// The plan of `inputs` with the knob set to a value, its verdict final (the caller's MakePlan
// and pool judgement).
using PlanAt = std::function<PlanResult(const PlanInputs& inputs)>;

// The largest value of `knob` whose plan's verdict is fits (Verdict::kFits), the plans at it
// and at the next value, and what stops the next.
Solution Solve(const PlanInputs& inputs, SolveKnob knob, const PlanAt& plan_at);

// plan --json's "solve": {"knob", "value" (null when nothing fits), "flag", "plans",
// "peak_bytes", "next_value", "next_peak_bytes", "next_verdict", "limited_by",
// "limited_by_bytes", "next_limited_by_bytes"}.
nlohmann::json SolutionToJson(const Solution& s);

}  // namespace headroom
