// Fuzz target: the companion's step records (src/samples/companion_records.h) on arbitrary
// bytes: parsed records keep their invariants, every refusal is one line, and the file
// parser agrees with the line parser (fuzz/companion_targets.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "companion_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!headroom::fuzz::StepRecordsHold(
          std::string_view(reinterpret_cast<const char*>(data), size))) {
    __builtin_trap();
  }
  return 0;
}
