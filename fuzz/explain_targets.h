// The body of the explain/ fuzz target (fuzz/step_log_fuzz.cc), shared with
// tests/fuzz_corpus_test.cc, which replays fuzz/corpus/step_log/ through it in every build.
// Returns false when an invariant breaks; the fuzzer traps on that, the test fails.
#pragma once

#include <cmath>
#include <string_view>
#include <vector>

#include "explain/step_log.h"
#include "explain/step_times.h"

namespace headroom::fuzz {

// Equal, counting two NaNs as equal (a nan loss is a value the parser keeps).
inline bool SameDouble(const std::optional<double>& a, const std::optional<double>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || *a == *b || (std::isnan(*a) && std::isnan(*b));
}

inline bool SameRecord(const StepRecord& a, const StepRecord& b) {
  return a.step == b.step && a.total_steps == b.total_steps && a.time == b.time &&
         a.arrival_time == b.arrival_time && a.time_source == b.time_source &&
         SameDouble(a.steps_per_second, b.steps_per_second) &&
         SameDouble(a.seconds_per_step, b.seconds_per_step) &&
         SameDouble(a.elapsed_seconds, b.elapsed_seconds) && SameDouble(a.loss, b.loss) &&
         SameDouble(a.epoch, b.epoch) && a.rank == b.rank && a.worker_pid == b.worker_pid &&
         a.stream == b.stream && a.line == b.line && a.format == b.format &&
         a.rate_is_measured == b.rate_is_measured;
}

// What every record must satisfy, whatever the input.
inline bool RecordHolds(const StepRecord& r, uint64_t max_line) {
  auto positive = [](const std::optional<double>& v) {
    return !v || (std::isfinite(*v) && *v > 0);
  };
  auto non_negative = [](const std::optional<double>& v) {
    return !v || (std::isfinite(*v) && *v >= 0);
  };
  if (r.step && *r.step < 0) return false;
  if (r.total_steps && *r.total_steps <= 0) return false;
  if (!positive(r.steps_per_second) || !positive(r.seconds_per_step)) return false;
  if (!non_negative(r.elapsed_seconds) || !non_negative(r.epoch)) return false;
  if (r.time.has_value() != (r.time_source != StepTimeSource::kNone)) return false;
  if (r.arrival_time && !r.time) return false;
  if (r.time_source == StepTimeSource::kArrival && r.time != r.arrival_time) return false;
  return r.line >= 1 && r.line <= max_line;
}

inline bool RecordsHold(std::string_view text, const std::vector<StepRecord>& records) {
  uint64_t max_line = 1;
  for (char c : text) max_line += c == '\n';
  uint64_t last_line = 0;
  for (const StepRecord& r : records) {
    if (!RecordHolds(r, max_line) || r.line < last_line) return false;
    last_line = r.line;
  }
  int last_segment = 0;
  for (const StepTiming& t : StepTimes(records)) {
    if (!std::isfinite(t.seconds_per_step) || t.seconds_per_step <= 0) return false;
    if (t.last_step <= t.first_step || t.record_index >= records.size()) return false;
    if (t.segment < last_segment) return false;
    last_segment = t.segment;
  }
  return true;
}

// The input parsed whole, then fed in pieces (of 1 to 16 bytes, by its first byte), must give
// the same records; both the built-in formats and a --step-regex pattern are run.
inline bool StepLogHolds(std::string_view text) {
  static const Result<StepPattern> pattern =
      StepPattern::Compile(R"((?<step>\d+)\D{1,8}(?<seconds>[0-9.]+)(?: (?<time>\S+))?)");
  for (const StepPattern* p : {static_cast<const StepPattern*>(nullptr), &*pattern}) {
    StepLogOptions options;
    options.pattern = p;
    const std::vector<StepRecord> whole = ParseStepLog(text, options);
    if (!RecordsHold(text, whole)) return false;
    const size_t piece = text.empty() ? 1 : 1 + static_cast<unsigned char>(text[0]) % 16;
    StepLogParser parser(options);
    std::vector<StepRecord> fed;
    for (size_t at = 0; at < text.size(); at += piece) parser.Feed(text.substr(at, piece), &fed);
    parser.Finish(&fed);
    if (fed.size() != whole.size()) return false;
    for (size_t i = 0; i < fed.size(); ++i) {
      if (!SameRecord(fed[i], whole[i])) return false;
    }
  }
  return true;
}

}  // namespace headroom::fuzz
