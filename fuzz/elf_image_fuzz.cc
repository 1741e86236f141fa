// Fuzz target for the ELF header check run before dlopen (gpu/library_file.h); the body and
// its invariants are in fuzz/gpu_targets.h.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "gpu_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!headroom::fuzz::ElfImageHolds(std::string_view(reinterpret_cast<const char*>(data), size)))
    std::abort();
  return 0;
}
