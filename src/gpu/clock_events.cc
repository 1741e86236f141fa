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

namespace {
// TRANSLATORS: NVML clock-event ("throttle") reasons as nvidia-smi names them. Keep the
// name and add a short explanation, e.g. "sw_power_cap（軟體功耗上限）".
constexpr const char* kLabels[] = {
    N_("gpu_idle"),
    N_("applications_clocks_setting"),
    N_("sw_power_cap"),
    N_("hw_slowdown"),
    N_("sync_boost"),
    N_("sw_thermal_slowdown"),
    N_("hw_thermal_slowdown"),
    N_("hw_power_brake_slowdown"),
    N_("display_clock_setting"),
};
}  // namespace

Message ClockEventReasonWord(std::string_view name) {
  for (const char* label : kLabels) {
    if (name == label) return MsgFrom(label);
  }
  return Message::Literal(std::string(name));
}

bool IsClockSlowdown(uint64_t mask) {
  // sw_power_cap | hw_slowdown | sync_boost | sw_thermal | hw_thermal | hw_power_brake.
  constexpr uint64_t kSlowdownBits = 0x04 | 0x08 | 0x10 | 0x20 | 0x40 | 0x80;
  return (mask & kSlowdownBits) != 0;
}

}  // namespace headroom
