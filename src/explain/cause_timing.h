// When a cause held, against the slowdown it is meant to explain: a cause must overlap the
// window, start no later than it (within a small tolerance), and end with it. A clock that
// collapsed 3.6 s after the steps slowed, and stayed low after they sped up again, did not slow
// them (issue 31, docs/explain.md "Timing"). Pure: samples and a per-sample test in, the
// cause's span, its overlap with the window and what rules it out.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "base/message.h"
#include "base/wall_time.h"
#include "samples/samples_csv.h"

namespace headroom {

struct CauseTiming {
  // The cause's contiguous run of samples that overlaps the window, each sample standing for
  // half an interval on either side; seconds relative to the window's start.
  double from_s = 0;
  double to_s = 0;
  double window_s = 0;
  double overlap_s = 0;  // the part of the window the run covers
  // The cause was seen absent after the slowdown began (beyond the tolerance): by `late_s`.
  std::optional<double> late_s;
  // The cause was seen absent before the slowdown ended (beyond the tolerance): by `early_s`.
  std::optional<double> early_s;
  // The cause still held after the steps were fast again (beyond the tolerance): by
  // `outlasted_s`.
  std::optional<double> outlasted_s;

  double share() const { return window_s > 0 ? overlap_s / window_s : 0; }
  bool IsCause() const { return !late_s && !early_s && !outlasted_s; }
};

struct CauseWindow {
  WallTime start, end;
  bool recovered = false;  // faster steps followed the window (it ended, not the log)
  double sample_interval_s = 0;
  double tolerance_s = 2;
};

// `holds` says whether the cause holds in a sample: nullopt for a sample without the
// readings (skipped, neither breaking nor extending a run). `samples` in any order. nullopt
// when no sample inside the window holds.
std::optional<CauseTiming> TimeCause(const std::vector<Sample>& samples,
                                     const std::function<std::optional<bool>(const Sample&)>& holds,
                                     const CauseWindow& window);

// "the clock collapse covers 36.4 s of the 40.0 s slowdown, from 3.6 s to 52.3 s, 91% of it"
// (`what` names the cause).
Message CauseOverlapText(const Message& what, const CauseTiming& timing);
// Why the timing rules it out: "it began 3.6 s after the slowdown did; it went on 12.3 s after
// the steps were fast again"; empty when it does not.
Message CauseMismatchText(const CauseTiming& timing);

}  // namespace headroom
