// Fuzz target: ParseHfConfig on any bytes must give a spec that passes CompleteAndValidate
// again unchanged, or a one-line error that starts with the source name.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!headroom::fuzz::HfConfigHolds(std::string_view(reinterpret_cast<const char*>(data), size))) {
    __builtin_trap();
  }
  return 0;
}
