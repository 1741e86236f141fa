#include "gpu/clock_events.h"

#include <cstdio>

namespace headroom {

std::vector<std::string> DecodeClockEventReasons(uint64_t mask) {
  std::vector<std::string> names;
  for (const ClockEventReason& reason : kClockEventReasons) {
    if (mask & reason.bit) names.emplace_back(reason.name);
  }
  if (const uint64_t unknown = mask & ~kClockEventReasonsKnownMask) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "unknown_0x%llx", static_cast<unsigned long long>(unknown));
    names.emplace_back(buf);
  }
  return names;
}

bool IsClockSlowdown(uint64_t mask) {
  // sw_power_cap | hw_slowdown | sync_boost | sw_thermal | hw_thermal | hw_power_brake.
  constexpr uint64_t kSlowdownBits = 0x04 | 0x08 | 0x10 | 0x20 | 0x40 | 0x80;
  return (mask & kSlowdownBits) != 0;
}

}  // namespace headroom
