// Fuzz target: the input as a whole safetensors file, as a bare header and as an index. Totals
// must add up, offsets stay inside the data, shard paths inside the folder; errors are one line.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!headroom::fuzz::SafetensorsHolds(
          std::string_view(reinterpret_cast<const char*>(data), size))) {
    __builtin_trap();
  }
  return 0;
}
