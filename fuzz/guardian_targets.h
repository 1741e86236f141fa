// The body of the guardian worker's fuzz target (fuzz/guardian_worker_fuzz.cc), shared with
// tests/fuzz_corpus_test.cc, which replays fuzz/corpus/guardian_worker/ in every build. The
// input is the worker's words, NUL-separated (argv cannot carry a NUL), and the same bytes as
// the `--print-levels` line SIGHUP reads. Invariants: no crash; accepted words give a kill
// level in (0, 1 PiB], a warning level 0 or above it, and encode back to words that decode to
// the same words again; an accepted levels line has the same bounds and encodes back to itself.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "guardian/worker_args.h"

namespace headroom::fuzz {

inline bool LevelsInBounds(uint64_t min, uint64_t warn) {
  return min > 0 && min <= (uint64_t{1} << 50) && (warn == 0 || warn > min) &&
         warn <= (uint64_t{1} << 50);
}

inline bool GuardianWorkerHolds(std::string_view text) {
  std::vector<std::string> words;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t nul = text.find('\0', start);
    const size_t end = nul == std::string_view::npos ? text.size() : nul;
    words.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (auto s = DecodeWorkerArgs(words)) {
    const GuardianOptions& o = s->options;
    if (!LevelsInBounds(o.min_available_bytes, o.warn_available_bytes)) return false;
    const auto again = EncodeWorkerArgs(*s);
    auto back = DecodeWorkerArgs(again);
    if (!back || EncodeWorkerArgs(*back) != again) return false;
  }
  if (auto l = DecodeReloadedLevels(text)) {
    if (!LevelsInBounds(l->min_available_bytes, l->warn_available_bytes)) return false;
    auto back = DecodeReloadedLevels(EncodeReloadedLevels(*l));
    if (!back || EncodeReloadedLevels(*back) != EncodeReloadedLevels(*l)) return false;
  }
  return true;
}

}  // namespace headroom::fuzz
