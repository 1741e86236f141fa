// Fuzz target: JsonReader against nlohmann::json; both must accept the same texts (the known
// differences are listed in fuzz_targets.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!headroom::fuzz::JsonReaderAgrees(
          std::string_view(reinterpret_cast<const char*>(data), size))) {
    __builtin_trap();
  }
  return 0;
}
