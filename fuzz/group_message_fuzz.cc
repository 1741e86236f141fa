// Fuzz target: the guard group's frame decoder (src/group/group_message.h) on arbitrary
// bytes; the invariants are in fuzz/group_targets.h.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "group_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!headroom::fuzz::GroupMessageHolds(
          std::string_view(reinterpret_cast<const char*>(data), size))) {
    std::abort();
  }
  return 0;
}
