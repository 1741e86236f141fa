// Fuzz target for a stored plan request's JSON form (plan/plan_request.h), which the journal
// keeps for a ladder and a person may edit by hand. Invariants: no crash; a refused request
// has a message saying why; an accepted one's JSON form reads back to the same form.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "plan_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!headroom::fuzz::PlanRequestHolds(
          std::string_view(reinterpret_cast<const char*>(data), size)))
    std::abort();
  return 0;
}
