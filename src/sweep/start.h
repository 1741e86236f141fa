// sweep --start (docs/sweep.md "Starting from the plan"): the first knob's first trial at a
// given value, usually plan --solve's answer, then up until a trial fails or down until one
// passes, and how far the plan was from what the sweep measured.
//
// The series are what the search (sweep/search.h) walks instead of the knob's doubling from
// LO: up, the start, the value just above it, then doubling from the start to HI; down, the
// value just below it, then halving to LO. The search's own refinement (the fitted peak, the
// bisection) then narrows between the last good and the first bad value, so a plan that is
// right costs two trials (its value passes, the next fails) and one off by one costs two or
// three.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sweep/grid.h"

namespace headroom {

// The value a trial of `knob` may take nearest at or below `v` (on a range's step, among a
// list's values); nullopt when `v` is outside [LO, HI] (a list: below its first value or
// above its last).
std::optional<int64_t> SnapToKnob(const Knob& knob, int64_t v);

struct StartSeries {
  std::vector<int64_t> up;    // ascending, from the start
  std::vector<int64_t> down;  // descending, below the start, ending at LO
  // A second point for the fitted peak once the start passed: half the start (snapped), far
  // enough from it that the line through the two predicts the value above the start. The
  // value just above is no such point: 1 % noise on two adjacent peaks puts the fitted slope
  // anywhere (bench/sweep_trials part 1b). None when no value lies below the start.
  std::optional<int64_t> fit;
};

// The series for a start on `knob`, snapped onto its values (SnapToKnob; a start outside the
// knob's values is clamped to LO or HI).
StartSeries StartingSeries(const Knob& knob, int64_t start);

// Where a sweep's first trial came from, and with --start plan what plan said.
struct SweepStart {
  std::string knob;   // the grid's first knob: batch or seq
  int64_t value = 0;  // the first trial's value, on the knob's values
  bool from_plan = false;
  // --start plan: plan --solve's answer (before it was brought into the knob's values), the
  // plan's peak at it, and the room it was judged against (the sweep's limit less the pool's
  // use when the sweep began; the device limit with --device-limit).
  int64_t plan_value = 0;
  uint64_t plan_peak_bytes = 0;
  uint64_t plan_room_bytes = 0;
};

// How far the plan was from the sweep's answer: measured - plan, and that as a percentage of
// the plan's value.
struct PlanGap {
  std::string knob;
  int64_t plan = 0, measured = 0, gap = 0;
  double percent = 0;
};

// The gap, when the start came from the plan and the sweep found an answer.
std::optional<PlanGap> PlanGapOf(const SweepStart& start, int64_t measured);

// The journal's and --json's "start": {"knob", "value", "from": "plan"|"flag"} and, from the
// plan, "plan": {"knob", "value", "peak_bytes", "room_bytes", "measured" (null: no answer),
// "gap", "gap_percent"}. `best`: the sweep's answer, if any.
void AddStartJson(const SweepStart& start, const std::optional<int64_t>& measured,
                  nlohmann::json* out);

}  // namespace headroom
