// Fuzz target for headroom-guardian's words (guardian/worker_args.h) and the `--print-levels`
// line its SIGHUP reads; the invariants are in guardian_targets.h.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "guardian_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!headroom::fuzz::GuardianWorkerHolds(
          std::string_view(reinterpret_cast<const char*>(data), size)))
    std::abort();
  return 0;
}
