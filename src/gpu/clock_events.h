// Clock-event ("throttle") reasons: the bitmask of nvmlDeviceGetCurrentClocksEventReasons
// (and of the deprecated ...ClocksThrottleReasons, same bits), decoded into the names
// nvidia-smi uses in its CSV queries (clocks_event_reasons.sw_power_cap, ...).
//
// Bit values are the header's (NVIDIA/go-nvml gen/nvml/nvml.h @ 2f9e261, lines ~3314-3458,
// see docs/gpu.md "Readings"), hard-coded and unit-tested because a
// GB10 monitor peer (sparkview) ships them shuffled. Note what the mask cannot say: on GB10
// the firmware power limits hold clocks at 500-850 MHz with no bit set at all.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/message.h"

namespace headroom {

struct ClockEventReason {
  uint64_t bit;
  std::string_view name;  // nvidia-smi's query suffix
};

// In bit order. gpu_idle and applications_clocks_setting and display_clock_setting are not
// slowdowns; the others hold clocks below what the load asks for.
inline constexpr ClockEventReason kClockEventReasons[] = {
    {0x0000000000000001ULL, "gpu_idle"},
    {0x0000000000000002ULL, "applications_clocks_setting"},
    {0x0000000000000004ULL, "sw_power_cap"},
    {0x0000000000000008ULL, "hw_slowdown"},
    {0x0000000000000010ULL, "sync_boost"},
    {0x0000000000000020ULL, "sw_thermal_slowdown"},
    {0x0000000000000040ULL, "hw_thermal_slowdown"},
    {0x0000000000000080ULL, "hw_power_brake_slowdown"},
    {0x0000000000000100ULL, "display_clock_setting"},
};

// The OR of every known bit (nvmlClocksEventReasonAll).
inline constexpr uint64_t kClockEventReasonsKnownMask = 0x1FFULL;

// Names of the bits set in `mask`, in bit order. Bits this table does not know (a newer
// driver's) come out as "unknown_0x<hex>" with the unknown bits, so they are shown, not lost.
std::vector<std::string> DecodeClockEventReasons(uint64_t mask);

// A reason's name for people: in English the name itself (nvidia-smi's, which the docs
// and forums use), in another language the name with a short explanation. Names the table
// does not know (unknown_0x...) come back as they are. For the terminal only: CSV columns,
// events, JSON and metric labels keep the names. A known reason is a marked message, another
// its name as text.
Message ClockEventReasonWord(std::string_view name);

// Whether any bit that means "clocks held below demand" is set: sw_power_cap, hw_slowdown,
// sync_boost, sw/hw thermal, hw power brake. Idle and settings bits do not count.
bool IsClockSlowdown(uint64_t mask);

}  // namespace headroom
