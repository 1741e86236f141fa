#include "sweep/start.h"

#include <algorithm>
#include <limits>

namespace headroom {

std::optional<int64_t> SnapToKnob(const Knob& knob, int64_t v) {
  if (knob.is_range) {
    if (v < knob.lo || v > knob.hi) return std::nullopt;
    return knob.lo + (v - knob.lo) / knob.step * knob.step;
  }
  if (knob.values.empty() || v < knob.values.front() || v > knob.values.back()) return std::nullopt;
  std::optional<int64_t> at;
  for (int64_t x : knob.values) {
    if (x <= v) at = x;
  }
  return at;
}

StartSeries StartingSeries(const Knob& knob, int64_t start) {
  StartSeries out;
  const int64_t lowest = knob.is_range ? knob.lo : knob.values.front();
  const int64_t top = *SnapToKnob(knob, knob.is_range ? knob.hi : knob.values.back());
  const auto snap = [&](int64_t v) { return *SnapToKnob(knob, std::clamp(v, lowest, top)); };
  const int64_t s = snap(start);
  // Up: the start, the value just above it, then doubling from the start to the top.
  out.up.push_back(s);
  if (const auto above = knob.Above(s)) out.up.push_back(*above);
  for (int64_t v = s; out.up.back() < top;) {
    v = v > std::numeric_limits<int64_t>::max() / 2 ? top : 2 * v;
    const int64_t next = snap(v);
    if (next > out.up.back()) out.up.push_back(next);
  }
  if (s / 2 >= lowest) {
    if (const auto half = SnapToKnob(knob, s / 2); half && *half < s) out.fit = half;
  }
  // Down: the value just below it, then halving to the bottom.
  if (const auto below = knob.LargestWhere(lowest - 1, s, [](int64_t) { return true; }))
    out.down.push_back(*below);
  for (int64_t v = s; !out.down.empty() && out.down.back() > lowest;) {
    v /= 2;
    const int64_t next = snap(v);
    if (next < out.down.back()) out.down.push_back(next);
  }
  return out;
}

std::optional<PlanGap> PlanGapOf(const SweepStart& start, int64_t measured) {
  if (!start.from_plan) return std::nullopt;
  PlanGap g;
  g.knob = start.knob;
  g.plan = start.plan_value;
  g.measured = measured;
  g.gap = measured - start.plan_value;
  if (start.plan_value > 0)
    g.percent = 100.0 * static_cast<double>(g.gap) / static_cast<double>(start.plan_value);
  return g;
}

void AddStartJson(const SweepStart& start, const std::optional<int64_t>& measured,
                  nlohmann::json* out) {
  using nlohmann::json;
  (*out)["start"] = {
      {"knob", start.knob}, {"value", start.value}, {"from", start.from_plan ? "plan" : "flag"}};
  if (!start.from_plan) return;
  json plan = {{"knob", start.knob},
               {"value", start.plan_value},
               {"peak_bytes", start.plan_peak_bytes},
               {"room_bytes", start.plan_room_bytes},
               {"measured", nullptr},
               {"gap", nullptr},
               {"gap_percent", nullptr}};
  if (measured) {
    const PlanGap g = *PlanGapOf(start, *measured);
    plan["measured"] = g.measured;
    plan["gap"] = g.gap;
    plan["gap_percent"] = g.percent;
  }
  (*out)["plan"] = plan;
}

}  // namespace headroom
