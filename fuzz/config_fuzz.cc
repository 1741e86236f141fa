// Fuzz target for config.toml: the TOML parser (toml++) behind our checks, and the
// resolver. Invariants in config_targets.h: no crash or hang, one-line errors naming the
// file, parsed settings that their own rules accept.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "config_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!headroom::fuzz::ConfigTomlHolds(std::string_view(reinterpret_cast<const char*>(data), size)))
    std::abort();
  return 0;
}
