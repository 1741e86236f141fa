// Implementation notes: three passes over the intervals, each O(n) apart from the baseline's
// sliding median (O(n * w log w) with w = baseline_intervals, 10: a million-step log costs
// well under a second). Slow runs are found first and merged second, so the "sustained" test
// applies to the merged window, not to each fragment. Step numbers come from outside (a log,
// the job's records) and may be anything up to 2^63 - 1: the total of steps covered stops at
// INT64_MAX rather than wrap (two intervals of 2^63 - 8 steps read as "steps": -16, issue 29).
#include "explain/slowdown.h"

#include <algorithm>
#include <limits>

namespace headroom {
namespace {

// a + b for counts of steps (both >= 0), at most INT64_MAX.
int64_t StepsPlus(int64_t a, int64_t b) {
  int64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<int64_t>::max() : sum;
}

std::optional<WallTime> Minus(const std::optional<WallTime>& t, double seconds) {
  if (!t) return std::nullopt;
  return *t -
         std::chrono::duration_cast<WallTime::duration>(std::chrono::duration<double>(seconds));
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Whether each interval counts: not among the first `warmup` of its segment.
std::vector<bool> UsableIntervals(const std::vector<StepTiming>& timings, size_t warmup) {
  std::vector<bool> usable(timings.size());
  size_t position = 0;
  for (size_t i = 0; i < timings.size(); ++i) {
    if (i > 0 && timings[i].segment != timings[i - 1].segment) position = 0;
    usable[i] = position++ >= warmup;
  }
  return usable;
}

void Baseline(const std::vector<StepTiming>& timings, const std::vector<bool>& usable, size_t width,
              SlowdownAnalysis& out) {
  std::vector<size_t> index;
  for (size_t i = 0; i < timings.size(); ++i) {
    if (usable[i]) index.push_back(i);
  }
  out.usable_intervals = index.size();
  if (index.empty()) return;
  const size_t w = std::clamp<size_t>(width, 1, index.size());
  std::optional<double> best;
  for (size_t k = 0; k + w <= index.size(); ++k) {
    std::vector<double> values;
    for (size_t j = k; j < k + w; ++j) values.push_back(timings[index[j]].seconds_per_step);
    const double m = Median(std::move(values));
    if (!best || m < *best) {
      best = m;
      out.baseline_first_step = timings[index[k]].first_step + 1;
      out.baseline_last_step = timings[index[k + w - 1]].last_step;
    }
  }
  out.baseline_seconds_per_step = *best;
}

SlowdownWindow MakeWindow(const std::vector<StepTiming>& timings, size_t first, size_t last,
                          double baseline) {
  SlowdownWindow w;
  w.first_interval = first;
  w.last_interval = last;
  w.first_step = timings[first].first_step + 1;
  w.last_step = timings[last].last_step;
  w.segment = timings[first].segment;
  for (size_t i = first; i <= last; ++i) {
    w.seconds += IntervalSeconds(timings[i]);
    w.peak_factor = std::max(w.peak_factor, timings[i].seconds_per_step / baseline);
  }
  const int64_t steps = std::max<int64_t>(1, w.last_step - w.first_step + 1);
  w.seconds_per_step = w.seconds / static_cast<double>(steps);
  w.factor = w.seconds_per_step / baseline;
  w.start_time = Minus(timings[first].end_time, IntervalSeconds(timings[first]));
  w.end_time = timings[last].end_time;
  return w;
}

void Windows(const std::vector<StepTiming>& timings, const std::vector<bool>& usable,
             const SlowdownThresholds& t, SlowdownAnalysis& out) {
  const double baseline = out.baseline_seconds_per_step;
  if (baseline <= 0) return;
  // Maximal runs of slow usable intervals within one segment: [first, last] pairs.
  struct Run {
    size_t first, last, slow;
  };
  std::vector<Run> runs;
  for (size_t i = 0; i < timings.size(); ++i) {
    const bool slow = usable[i] && timings[i].seconds_per_step >= t.slow_factor * baseline;
    if (!slow) continue;
    const bool extends = !runs.empty() && runs.back().last + 1 == i &&
                         timings[runs.back().last].segment == timings[i].segment;
    if (extends) {
      runs.back().last = i;
      ++runs.back().slow;
    } else {
      runs.push_back({i, i, 1});
    }
  }
  // Merge runs across short gaps of faster intervals (same segment only).
  std::vector<Run> merged;
  for (const Run& r : runs) {
    if (!merged.empty() && r.first - merged.back().last - 1 <= t.max_gap_intervals &&
        timings[merged.back().last].segment == timings[r.first].segment) {
      merged.back().last = r.last;
      merged.back().slow += r.slow;
    } else {
      merged.push_back(r);
    }
  }
  for (const Run& r : merged) {
    SlowdownWindow w = MakeWindow(timings, r.first, r.last, baseline);
    w.recovered = r.last + 1 < timings.size() && usable[r.last + 1] &&
                  timings[r.last + 1].segment == w.segment;
    if (r.slow < t.min_intervals || w.last_step - w.first_step + 1 < t.min_steps) continue;
    out.windows.push_back(w);
  }
}

void Series(const std::vector<StepTiming>& timings, size_t buckets, SlowdownAnalysis& out) {
  if (timings.empty() || buckets == 0) return;
  const size_t per = (timings.size() + buckets - 1) / buckets;
  for (size_t a = 0; a < timings.size(); a += per) {
    const size_t b = std::min(timings.size(), a + per) - 1;
    SeriesBucket s;
    s.first_step = timings[a].first_step + 1;
    s.last_step = timings[b].last_step;
    double seconds = 0, steps = 0;
    for (size_t i = a; i <= b; ++i) {
      seconds += IntervalSeconds(timings[i]);
      steps += static_cast<double>(timings[i].last_step - timings[i].first_step);
    }
    s.seconds_per_step = steps > 0 ? seconds / steps : 0;
    if (out.baseline_seconds_per_step > 0) {
      s.factor = s.seconds_per_step / out.baseline_seconds_per_step;
    }
    s.start_time = Minus(timings[a].end_time, IntervalSeconds(timings[a]));
    s.end_time = timings[b].end_time;
    out.series.push_back(s);
  }
}

}  // namespace

double IntervalSeconds(const StepTiming& t) {
  return t.seconds_per_step * static_cast<double>(t.last_step - t.first_step);
}

SlowdownAnalysis FindSlowdowns(const std::vector<StepTiming>& timings,
                               const SlowdownThresholds& thresholds) {
  SlowdownAnalysis out;
  out.intervals = timings.size();
  if (timings.empty()) return out;
  out.segments = timings.back().segment + 1;
  for (const auto& t : timings) out.steps = StepsPlus(out.steps, t.last_step - t.first_step);
  const std::vector<bool> usable = UsableIntervals(timings, thresholds.warmup_intervals);
  Baseline(timings, usable, thresholds.baseline_intervals, out);
  Windows(timings, usable, thresholds, out);
  Series(timings, thresholds.series_buckets, out);
  return out;
}

}  // namespace headroom
