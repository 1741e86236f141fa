// StepTimes: seconds per step over a log's step records, the series `explain` looks for
// slowdowns in.
//
// Which records: those of one stream (StepRecord::stream) that carry a step, by default the
// stream with the most of them. A multi-rank log repeats each step once per rank, an HF
// Trainer log has a checkpoint-loading bar and eval bars besides the training bar, and only
// one counter can give intervals that mean anything.
//
// Each pair of consecutive records (a, b) with b.step > a.step gives one interval of
// b.step - a.step steps, timed by the first that applies:
//   1. kMeasured: b's own per-step time when the trainer measured it (Megatron's "elapsed
//      time per iteration", a --step-regex seconds/ms/rate group, a JSON step_time);
//   2. kTimestamps: b.time - a.time, both known and b later (the arrival prefix has
//      milliseconds; a line's own stamp may have whole seconds);
//   3. kElapsed: the difference of the elapsed counters when it spans >= kMinElapsedSpan
//      (tqdm prints whole seconds, so a shorter span has an error over 10%);
//   4. kDisplayedRate: b's displayed rate (tqdm's EMA, smoothing 0.3), or its SI-rounded
//      inverse;
//   5. kElapsed over a shorter span, as a last resort.
// A record with the same step as the one before is a repeat (a tqdm refresh) and is skipped.
// A step, a time or an elapsed counter that goes back is a restart (a resumed job, a new
// epoch of a per-epoch bar, two runs in one file): the segment number goes up and no interval
// spans the break.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "explain/step_record.h"

namespace headroom {

enum class StepTimingSource : uint8_t { kMeasured, kTimestamps, kElapsed, kDisplayedRate };

// "measured", "timestamps", "elapsed", "displayed-rate".
std::string_view StepTimingSourceName(StepTimingSource source);

struct StepTiming {
  int64_t first_step = 0;  // the interval covers steps first_step + 1 .. last_step
  int64_t last_step = 0;
  double seconds_per_step = 0;       // finite and > 0
  std::optional<WallTime> end_time;  // the closing record's time, when it has one
  std::optional<double> end_elapsed_seconds;
  StepTimingSource source = StepTimingSource::kMeasured;
  size_t record_index = 0;  // the closing record's index in the input
  int segment = 0;          // 0, then one more after each restart
};

inline constexpr double kMinElapsedSpan = 10.0;  // seconds

// The stream with the most records that carry a step (the first such record's on a tie);
// nullopt when no record has a step.
std::optional<uint64_t> PrimaryStream(const std::vector<StepRecord>& records);

// Intervals of PrimaryStream(records), in log order; empty when there is none.
std::vector<StepTiming> StepTimes(const std::vector<StepRecord>& records);
// Intervals of the given stream.
std::vector<StepTiming> StepTimes(const std::vector<StepRecord>& records, uint64_t stream);

}  // namespace headroom
