#include "explain/companion_steps.h"

#include <chrono>
#include <cmath>
#include <functional>

namespace headroom {

std::vector<StepRecord> StepRecordsFromCompanion(const CompanionRecords& records) {
  std::vector<StepRecord> out;
  uint64_t line = 0;
  for (const CompanionRecord& c : records.records) {
    ++line;
    if (c.kind != CompanionKind::kStep || !c.step) continue;
    StepRecord r;
    r.step = c.step;
    // Microseconds: time.time() has them, and the intervals are what explain measures.
    r.time = WallTime(std::chrono::duration_cast<WallTime::duration>(
        std::chrono::microseconds(static_cast<int64_t>(std::llround(c.wall_s * 1e6)))));
    r.time_source = StepTimeSource::kLine;
    r.loss = c.loss;
    if (c.rank) r.rank = static_cast<int>(*c.rank);
    r.worker_pid = c.pid;
    r.stream = std::hash<int64_t>{}(c.pid) * 31 + static_cast<uint64_t>(c.rank.value_or(-1) + 1);
    r.line = line;  // the record's index among the parsed records, 1-based
    r.format = StepLogFormat::kCompanion;
    r.rate_is_measured = true;
    out.push_back(r);
  }
  return out;
}

bool IsCompanionRecordsText(std::string_view text) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) {
      return static_cast<bool>(ParseCompanionRecord(line));
    }
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return false;
}

std::vector<StepRecord> ParseStepSource(std::string_view text, StepLogOptions options,
                                        bool* from_records) {
  const bool records = IsCompanionRecordsText(text);
  if (from_records) *from_records = records;
  if (records) return StepRecordsFromCompanion(ParseCompanionRecords(text));
  return ParseStepLog(text, options);
}

}  // namespace headroom
