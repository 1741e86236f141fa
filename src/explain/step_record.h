// StepRecord: what one line of a training log says about a step. Produced by the parsers of
// explain/step_log.h and explain/step_pattern.h, consumed by explain/step_times.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/wall_time.h"

namespace headroom {

enum class StepLogFormat : uint8_t {
  kTqdm,
  kTorchtuneProgress,
  kTorchtuneStep,
  kHfDict,
  kMegatron,
  kJsonLines,
  kUserPattern,
  kCompanion,  // the companion's step records (explain/companion_steps.h)
};

// "tqdm", "torchtune-progress", "torchtune-step", "hf-dict", "megatron", "jsonl", "regex",
// "headroom-step".
std::string_view StepLogFormatName(StepLogFormat format);

enum class StepTimeSource : uint8_t {
  kNone,
  kLine,       // the line's own timestamp, with a zone (or a Unix time in JSON)
  kLineLocal,  // the line's own timestamp with no zone: its fields read as UTC
  kArrival,    // the arrival prefix
};

// One step, or one summary, as a log line reports it. Every number is as printed: nothing is
// derived here (StepTimes does that). Optionals are empty when the line did not say.
struct StepRecord {
  std::optional<int64_t> step;             // >= 0; global step when the format has one
  std::optional<int64_t> total_steps;      // > 0; tqdm's total (per epoch for torchtune's bar)
  std::optional<WallTime> time;            // the line's own time if it has one, else the arrival
  std::optional<WallTime> arrival_time;    // the prefix's, kept even when the line has a time
  std::optional<double> steps_per_second;  // > 0: tqdm "it/s", HF train_steps_per_second
  std::optional<double> seconds_per_step;  // > 0: tqdm "s/it", Megatron ms / 1000, regex
  std::optional<double> elapsed_seconds;   // >= 0: tqdm elapsed, JSON "elapsed", train_runtime
  std::optional<double> loss;              // as printed: nan and inf are kept, they mean something
  std::optional<double> epoch;             // HF "epoch" (fractional), torchtune's epoch
  std::optional<int64_t> worker_pid;       // from Ray's "(... pid=1234)"
  std::optional<int> rank;                 // from "[default0]:", "[rank3]:", "[1,3]<stdout>:"
  // Records with the same stream come from one counter: same format, rank, worker, total and
  // the letters of the bar's description (so a "Loading checkpoint shards" bar or an eval bar
  // is not mistaken for the training bar). A hash; compare, do not interpret.
  uint64_t stream = 0;
  uint64_t line = 0;  // 1-based physical line ('\n'-separated) the segment was on
  StepTimeSource time_source = StepTimeSource::kNone;  // where `time` came from
  StepLogFormat format = StepLogFormat::kTqdm;
  bool rate_is_measured = false;  // the trainer timed the steps (Megatron, regex, JSON); false
                                  // for tqdm's display, an exponential moving average
};

}  // namespace headroom
