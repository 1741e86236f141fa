// Measured anchors: the answers of finished sweeps, read back from the journal so that
// `headroom plan` can show "your measured anchors" beside the built-in published ones.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "store/journal.h"

namespace headroom {

struct MeasuredAnchor {
  int64_t run_id = 0;
  std::string ended_at;              // ISO 8601 UTC
  std::string model, method;         // the sweep's --model / --method labels ("" if none)
  std::vector<std::string> command;  // the sweep's command template
  std::string config_text;           // "batch=6 seq=1024"
  std::optional<int64_t> batch, seq, grad_accum;
  uint64_t peak_bytes = 0;  // the best trial's peak above its baseline
  uint64_t limit_bytes = 0;
  // A sweep started from plan --solve (sweep --start plan, sweep/start.h): the knob and the
  // value plan said; the answer's value of that knob is what the sweep measured.
  std::string plan_knob;
  std::optional<int64_t> plan_value;
};

// Finished sweeps (status "done") with an answer, newest first, among the newest
// `max_runs` runs. Runs whose summary does not parse are skipped, not errors.
Result<std::vector<MeasuredAnchor>> ReadMeasuredAnchors(Journal& journal, int max_runs = 500);

}  // namespace headroom
