// The step-log layer of `headroom explain`: a training log in, a series of step records out.
//
// A log is split into segments at every '\n' and every '\r' (a tqdm bar writing to a pipe or
// a file ends each update with '\r', not '\n'). Each segment is recognised on its own, so a
// log may mix formats (an HF Trainer log holds tqdm bars and loss dicts side by side); the
// recognisers are anchored and cheap, so trying each one on every segment costs less than a
// per-file guess would save. Formats, in the order they are tried (docs/explain-logs.md has
// examples of each):
//
//   kMegatron           "[ts] iteration N/ M | ... elapsed time per iteration (ms): X | ..."
//   kTorchtuneStep      "Step N | loss:1.23 lr:2e-05 tokens_per_second_per_gpu:..."
//   kHfDict             "{'loss': 1.2345, 'grad_norm': ..., 'epoch': 0.5}", and the final
//                       "{'train_runtime': ..., 'train_steps_per_second': ...}" (HF Trainer,
//                       TRL, axolotl; numbers quoted or bare, nan and inf accepted)
//   kJsonLines          {"step": 10, "time": 1764410400.5, "loss": 1.2} (keys below)
//   kTqdm               "... 30/1000 [00:15<08:05,  2.00it/s, loss=1.2]" (it/s, s/it, ?it/s,
//                       SI-scaled counts and rates, bars with no total: "30it [00:15, ...]")
//   kTorchtuneProgress  a tqdm bar whose description is "{epoch}|{global_step}|Loss: {loss}",
//                       or that description alone
//
// Every segment may start with these prefixes, stripped in this order:
//   1. the arrival stamp `headroom watch --log` writes (kArrivalPrefixVersion below);
//   2. launcher tags, up to 3: torchrun's "[default0]:" or "[rank0]:", OpenMPI's
//      "[1,0]<stdout>:", Ray's "(RayTrainWorker pid=1234)" or "(pid=1234, ip=10.0.0.1)".
// Launchers tag physical lines: the '\r' updates of a tqdm bar after the first carry no tag,
// so a tag applies to every segment of its physical line. The arrival stamp does not: a
// stamp is the time of one segment only (reusing it would give later updates an early time).
//
// With a user pattern (--step-regex, StepPattern below) only that pattern is tried.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "explain/step_pattern.h"
#include "explain/step_record.h"

namespace headroom {

// The arrival prefix of `headroom watch --log`: each segment of the job's output is written
// with the time it arrived in front,
//
//   2026-11-29T10:00:00.123Z <the segment's bytes><the '\n' or '\r' that ended it>
//
// i.e. FormatUtcIso8601(arrival time), one space, the segment as read, its own terminator.
// Keeping '\r' keeps the physical lines of the original, so a launcher tag on a line's first
// segment still covers its '\r' updates. The parser accepts any number of fraction digits
// and a numeric offset ("+00:00", "+0530") in place of "Z"; a stamp with no zone is not taken
// for an arrival prefix. Version 1 of the format.
inline constexpr int kArrivalPrefixVersion = 1;

struct StepLogOptions {
  // When set, only this pattern is tried (the built-in formats are not). Not owned.
  const StepPattern* pattern = nullptr;
};

// Parses a log fed in pieces of any size (a followed file, a pipe): complete segments are
// parsed as soon as their terminator arrives; a trailing partial segment waits for more.
class StepLogParser {
 public:
  // A segment longer than this is dropped unparsed, up to its end: no format has lines this
  // long, and a log with no '\n' or '\r' (binary data, a runaway print) must not grow the
  // pending buffer without bound.
  static constexpr size_t kMaxSegmentBytes = 64 * 1024;

  explicit StepLogParser(StepLogOptions options = {});

  // Appends the records of the complete segments in `bytes` to *out.
  void Feed(std::string_view bytes, std::vector<StepRecord>* out);
  // End of input: parses a last segment with no terminator.
  void Finish(std::vector<StepRecord>* out);

  uint64_t lines() const { return line_; }                // physical lines begun so far
  uint64_t dropped_segments() const { return dropped_; }  // segments over kMaxSegmentBytes

 private:
  void Segment(std::string_view segment, std::vector<StepRecord>* out);
  void EndSegment(std::string_view segment, bool newline, std::vector<StepRecord>* out);

  StepLogOptions options_;
  std::string pending_;      // an unterminated segment carried to the next Feed
  bool line_start_ = true;   // the next segment begins a physical line
  bool discarding_ = false;  // inside an over-long segment: skip to its terminator
  uint64_t line_ = 0;
  uint64_t dropped_ = 0;
  // The launcher tag of the current physical line, for its '\r' segments.
  std::optional<int> line_rank_;
  std::optional<int64_t> line_worker_pid_;
};

// Parses a whole log held in memory.
std::vector<StepRecord> ParseStepLog(std::string_view text, StepLogOptions options = {});

}  // namespace headroom
