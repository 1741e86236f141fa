// Implementation notes: the run is found in time order over the samples that have a reading;
// it is the longest stretch of holding samples with at least one sample inside the window
// (widened by half an interval). "Late" and "early" rest on a sample that was read and did
// not hold, so sparse samples never accuse a cause on what was not measured; the tolerance
// absorbs log stamps rounded to the second.
#include "explain/cause_timing.h"

#include <algorithm>
#include <chrono>

namespace headroom {
namespace {

double SecondsAfter(WallTime t, WallTime origin) {
  return std::chrono::duration<double>(t - origin).count();
}

}  // namespace

std::optional<CauseTiming> TimeCause(const std::vector<Sample>& samples,
                                     const std::function<std::optional<bool>(const Sample&)>& holds,
                                     const CauseWindow& w) {
  struct Reading {
    double t;
    bool holds;
  };
  std::vector<Reading> read;
  for (const Sample& s : samples) {
    if (const auto h = holds(s)) read.push_back({SecondsAfter(s.time, w.start), *h});
  }
  std::sort(read.begin(), read.end(), [](const Reading& a, const Reading& b) { return a.t < b.t; });
  const double pad = w.sample_interval_s / 2;
  const double length = std::max(0.0, SecondsAfter(w.end, w.start));
  // The longest run of holding readings with one inside the window: [first, last].
  std::optional<std::pair<size_t, size_t>> best;
  for (size_t i = 0; i < read.size();) {
    if (!read[i].holds) {
      ++i;
      continue;
    }
    size_t j = i;
    bool inside = false;
    while (j < read.size() && read[j].holds) {
      inside = inside || (read[j].t >= -pad && read[j].t <= length + pad);
      ++j;
    }
    if (inside && (!best || j - i > best->second - best->first + 1)) best = {{i, j - 1}};
    i = j;
  }
  if (!best) return std::nullopt;
  const auto [first, last] = *best;
  CauseTiming out;
  out.window_s = length;
  out.from_s = read[first].t - pad;
  out.to_s = read[last].t + pad;
  out.overlap_s = std::max(0.0, std::min(out.to_s, length) - std::max(out.from_s, 0.0));
  if (first > 0 && read[first - 1].t >= w.tolerance_s) out.late_s = std::max(0.0, out.from_s);
  if (last + 1 < read.size() && read[last + 1].t <= length - w.tolerance_s)
    out.early_s = length - std::min(length, out.to_s);
  if (w.recovered && read[last].t > length + w.tolerance_s) out.outlasted_s = out.to_s - length;
  return out;
}

Message CauseOverlapText(const Message& what, const CauseTiming& t) {
  // TRANSLATORS: {0} names a cause ("the clock collapse"); times in seconds from the
  // slowdown's start.
  return Msg(
      "{0} covers {1:.1f} s of the {2:.1f} s slowdown, from {3:.1f} s to {4:.1f} s, "
      "{5:.0f}% of it",
      what, t.overlap_s, t.window_s, t.from_s, t.to_s, t.share() * 100);
}

Message CauseMismatchText(const CauseTiming& t) {
  std::vector<Message> why;
  if (t.late_s) why.push_back(Msg("it began {:.1f} s after the slowdown did", *t.late_s));
  if (t.early_s)
    why.push_back(Msg("it ended {:.1f} s before the slowdown did, which went on", *t.early_s));
  if (t.outlasted_s) {
    why.push_back(Msg("it went on {:.1f} s after the steps were fast again", *t.outlasted_s));
  }
  return JoinMessages(why, "; ");
}

}  // namespace headroom
