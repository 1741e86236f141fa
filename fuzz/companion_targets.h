// The body of the step-record fuzz target (fuzz/step_record_fuzz.cc), shared with
// tests/fuzz_corpus_test.cc, which replays fuzz/corpus/step_record/ through it in every
// build. Returns false when an invariant breaks; the fuzzer traps on that, the test fails.
#pragma once

#include <cmath>
#include <string>
#include <string_view>

#include "base/message.h"
#include "samples/companion_records.h"

namespace headroom::fuzz {

// What a parsed record must satisfy, whatever the input (samples/companion_records.h).
inline bool CompanionRecordHolds(const CompanionRecord& r) {
  if (r.pid <= 0 || r.pid > INT32_MAX) return false;
  if (!std::isfinite(r.wall_s) || r.wall_s < 0 || !std::isfinite(r.mono_s) || r.mono_s < 0) {
    return false;
  }
  if ((r.step && *r.step < 0) || (r.tokens && *r.tokens < 0) || (r.rank && *r.rank < 0)) {
    return false;
  }
  if (r.kind == CompanionKind::kStep && !r.step) return false;
  if (r.lr && !std::isfinite(*r.lr)) return false;
  if (r.duration_s && !(std::isfinite(*r.duration_s) && *r.duration_s >= 0)) return false;
  if (r.signal && (*r.signal < 1 || *r.signal > 64)) return false;
  for (const std::string* s : {&r.framework, &r.reason, &r.path, &r.error}) {
    if (s->size() > 4096) return false;
  }
  return true;
}

// The whole text as a file, and each of its lines alone: the file's records are exactly the
// lines that parse alone, in order; every refusal is a one-line message.
inline bool StepRecordsHold(std::string_view text) {
  const CompanionRecords all = ParseCompanionRecords(text);
  size_t next = 0;
  uint64_t refused = 0;
  std::string_view rest = text;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto one = ParseCompanionRecord(line);
    if (!one) {
      const std::string why = EnglishText(one.error().what);
      if (why.empty() || why.find('\n') != std::string::npos) return false;
      ++refused;
      continue;
    }
    if (!CompanionRecordHolds(*one)) return false;
    if (next >= all.records.size() || all.records[next].kind != one->kind ||
        all.records[next].pid != one->pid || all.records[next].step != one->step) {
      return false;
    }
    ++next;
  }
  return next == all.records.size() && refused == all.bad_lines + all.other_schema;
}

}  // namespace headroom::fuzz
