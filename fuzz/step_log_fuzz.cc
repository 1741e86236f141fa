// Fuzz target: the step-log parser (src/explain/step_log.h) on arbitrary bytes: records keep
// their invariants, StepTimes gives finite positive intervals, and feeding the input in pieces
// gives the same records as parsing it whole (fuzz/explain_targets.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "explain_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!headroom::fuzz::StepLogHolds(std::string_view(reinterpret_cast<const char*>(data), size))) {
    __builtin_trap();
  }
  return 0;
}
