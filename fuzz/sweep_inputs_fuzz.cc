// Fuzz target for the outside text a sweep reads: /proc/zoneinfo (the per-CPU free pages),
// /proc/vmstat (oom_kill), a trial's output (out-of-memory messages) and the knob values a
// user types. Invariants: no crash; an OOM message found is at most 200 bytes with no
// control characters; a parsed knob's values are ascending, unique, within [lo, hi], and
// its lattice search agrees with a scan of the listed values.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sweep/grid.h"
#include "sweep/trial.h"
#include "sys/zoneinfo.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)headroom::ParsePerCpuFreePages(text);
  (void)headroom::ParseVmstatValue(text, "oom_kill");
  if (auto line = headroom::FindOomMessage(text)) {
    if (line->size() > 200) std::abort();
    for (char c : *line) {
      if (static_cast<unsigned char>(c) < 0x20) std::abort();
    }
  }
  if (size < 64) {
    if (auto knob = headroom::ParseKnob("batch", "--batch", text)) {
      for (size_t i = 0; i < knob->values.size(); ++i) {
        if (knob->values[i] < knob->lo || knob->values[i] > knob->hi) std::abort();
        if (i > 0 && knob->values[i - 1] >= knob->values[i]) std::abort();
      }
      // With "everything fits" the largest value is the top of the knob.
      const auto top = knob->LargestWhere(0, knob->hi + 1, [](int64_t) { return true; });
      if (!top || *top != knob->hi) std::abort();
    }
  }
  return 0;
}
