// Slowdown windows: where a run's seconds per step (explain/step_times.h) stayed well above
// its own baseline. Pure: intervals in, a baseline, a compact series and windows out.
//
// Baseline: the fastest stable stretch of the run, i.e. the smallest median over any
// `baseline_intervals` consecutive usable intervals (all of them when there are fewer). A
// median ignores one odd interval; "fastest stretch" rather than "first stretch" because the
// first minutes of a job often run slow (compilation, caches filling, the data loader's
// workers starting). A run that is slow from its first step has a slow baseline: explain
// measures slowdowns within a run, not against a benchmark.
//
// Usable intervals: the first `warmup_intervals` of each segment (the start, and every
// restart: a resumed job reloads its checkpoint and recompiles) count for neither the
// baseline nor a window.
//
// Window: a run of consecutive usable intervals of one segment, each at least
// `slow_factor` x baseline seconds per step, that is sustained: at least `min_intervals`
// intervals covering at least `min_steps` steps. One slow interval is not sustained: it is
// what an evaluation pause, a checkpoint save or a garbage collection looks like in a log
// (one step, or one logging interval, that took minutes). Two slow runs separated by at most
// `max_gap_intervals` faster intervals are one window, so noise around the threshold does not
// split one slowdown into many.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "base/wall_time.h"
#include "explain/step_times.h"

namespace headroom {

struct SlowdownThresholds {
  // 1.5x: the definition of a slowdown. GB10's thermal slowdowns cost 1.3-2x and
  // its clock collapse 3-4x (2400 MHz down to 500-850 MHz), so 1.5x catches both while
  // staying clear of the +-10-20% step-time noise of a healthy run.
  double slow_factor = 1.5;
  size_t baseline_intervals = 10;
  size_t warmup_intervals = 1;
  size_t min_intervals = 3;
  int64_t min_steps = 3;
  size_t max_gap_intervals = 1;
  // Buckets of the compact series (Series below).
  size_t series_buckets = 12;
};

struct SlowdownWindow {
  size_t first_interval = 0;  // indexes into the StepTiming vector, inclusive
  size_t last_interval = 0;
  int64_t first_step = 0;  // the steps covered: first_step .. last_step
  int64_t last_step = 0;
  int segment = 0;
  // Wall times: start is the first interval's end minus its duration; nullopt when the log
  // has no times (then samples cannot be aligned with the window).
  std::optional<WallTime> start_time;
  std::optional<WallTime> end_time;
  // Faster intervals follow the window: the slowdown ended, not the log (a cause still
  // holding after it then did not cause it, explain/cause_timing.h).
  bool recovered = false;
  double seconds = 0;           // sum of the intervals' durations
  double seconds_per_step = 0;  // seconds / steps
  double factor = 0;            // seconds_per_step / baseline
  double peak_factor = 0;       // the slowest interval's factor
};

// A bucket of the compact series: consecutive intervals, summed.
struct SeriesBucket {
  int64_t first_step = 0;
  int64_t last_step = 0;
  std::optional<WallTime> start_time;
  std::optional<WallTime> end_time;
  double seconds_per_step = 0;
  double factor = 0;
};

struct SlowdownAnalysis {
  size_t intervals = 0;                  // all intervals given
  size_t usable_intervals = 0;           // without the warm-up ones
  int64_t steps = 0;                     // steps covered by all intervals
  int segments = 0;                      // 1 + restarts
  double baseline_seconds_per_step = 0;  // 0 when there is no usable interval
  int64_t baseline_first_step = 0;       // the stretch the baseline came from
  int64_t baseline_last_step = 0;
  std::vector<SeriesBucket> series;
  std::vector<SlowdownWindow> windows;
};

// Duration of one interval: seconds_per_step x steps.
double IntervalSeconds(const StepTiming& t);

SlowdownAnalysis FindSlowdowns(const std::vector<StepTiming>& timings,
                               const SlowdownThresholds& thresholds = {});

}  // namespace headroom
