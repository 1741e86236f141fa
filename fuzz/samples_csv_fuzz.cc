// Fuzz target for the samples CSV reader (samples/samples_csv.h): any bytes parse or give a
// one-line error, and what parses is stable: a row written back from a parsed sample parses
// to the same row again.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (!headroom::fuzz::SamplesCsvHolds(text)) __builtin_trap();
  return 0;
}
