// Implementation notes: one pass with an anchor (the last record accepted); an interval is
// emitted only when its value is finite and > 0, so a caller can divide by it. The primary
// stream is counted in a small vector: a log has a handful of streams, not thousands.
#include "explain/step_times.h"

#include <chrono>
#include <cmath>
#include <utility>

namespace headroom {
namespace {

std::optional<double> ByDisplayedRate(const StepRecord& r) {
  if (r.seconds_per_step) return *r.seconds_per_step;
  if (r.steps_per_second) return 1.0 / *r.steps_per_second;
  return std::nullopt;
}

}  // namespace

std::string_view StepTimingSourceName(StepTimingSource source) {
  switch (source) {
    case StepTimingSource::kMeasured:
      return "measured";
    case StepTimingSource::kTimestamps:
      return "timestamps";
    case StepTimingSource::kElapsed:
      return "elapsed";
    case StepTimingSource::kDisplayedRate:
      return "displayed-rate";
  }
  return "unknown";
}

std::optional<uint64_t> PrimaryStream(const std::vector<StepRecord>& records) {
  std::vector<std::pair<uint64_t, size_t>> counts;  // in order of first appearance
  for (const StepRecord& r : records) {
    if (!r.step) continue;
    auto it = counts.begin();
    while (it != counts.end() && it->first != r.stream) ++it;
    if (it == counts.end()) {
      counts.emplace_back(r.stream, 1);
    } else {
      ++it->second;
    }
  }
  if (counts.empty()) return std::nullopt;
  auto best = counts.begin();
  for (auto it = counts.begin(); it != counts.end(); ++it) {
    if (it->second > best->second) best = it;
  }
  return best->first;
}

std::vector<StepTiming> StepTimes(const std::vector<StepRecord>& records) {
  const std::optional<uint64_t> stream = PrimaryStream(records);
  if (!stream) return {};
  return StepTimes(records, *stream);
}

std::vector<StepTiming> StepTimes(const std::vector<StepRecord>& records, uint64_t stream) {
  std::vector<StepTiming> out;
  const StepRecord* anchor = nullptr;
  int segment = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const StepRecord& b = records[i];
    if (b.stream != stream || !b.step) continue;
    if (anchor == nullptr) {
      anchor = &b;
      continue;
    }
    const StepRecord& a = *anchor;
    if (*b.step == *a.step) continue;  // a repeat
    std::optional<double> dt, de;
    if (a.time && b.time) {
      dt = std::chrono::duration<double>(*b.time - *a.time).count();
    }
    if (a.elapsed_seconds && b.elapsed_seconds) de = *b.elapsed_seconds - *a.elapsed_seconds;
    if (*b.step < *a.step || (dt && *dt < 0) || (de && *de < 0)) {
      ++segment;  // a restart: start over from b
      anchor = &b;
      continue;
    }
    const double steps = static_cast<double>(*b.step - *a.step);
    std::optional<double> value;
    StepTimingSource source = StepTimingSource::kMeasured;
    if (b.rate_is_measured && (value = ByDisplayedRate(b))) {
      source = StepTimingSource::kMeasured;
    } else if (dt && *dt > 0) {
      value = *dt / steps;
      source = StepTimingSource::kTimestamps;
    } else if (de && *de >= kMinElapsedSpan) {
      value = *de / steps;
      source = StepTimingSource::kElapsed;
    } else if ((value = ByDisplayedRate(b))) {
      source = StepTimingSource::kDisplayedRate;
    } else if (de && *de > 0) {
      value = *de / steps;
      source = StepTimingSource::kElapsed;
    }
    anchor = &b;
    if (!value || !std::isfinite(*value) || *value <= 0) continue;
    StepTiming t;
    t.first_step = *a.step;
    t.last_step = *b.step;
    t.seconds_per_step = *value;
    t.end_time = b.time;
    t.end_elapsed_seconds = b.elapsed_seconds;
    t.source = source;
    t.record_index = i;
    t.segment = segment;
    out.push_back(t);
  }
  return out;
}

}  // namespace headroom
