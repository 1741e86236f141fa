// Platform profiles: what a machine's GPU readings mean for the budget and for `explain`.
//
// A pure function from the first sample of GPU readings to a profile, so each case is a
// unit test with literal readings:
//   - GB10 (DGX Spark): detected by the NVML name ("NVIDIA GB10"). One unified pool: the
//     budget comes from /proc/meminfo (NVML memory answers NOT_SUPPORTED), no power limit is
//     reported, so the profile carries the platform's known figures instead.
//   - discrete NVIDIA GPUs: memory and power limit from NVML.
//   - integrated: another NVIDIA GPU whose memory NVML cannot report (Jetson, or a shim that
//     answers total 0): memory from /proc/meminfo, nothing else assumed.
//   - no GPU (no library, no device): memory from /proc/meminfo.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "gpu/gpu.h"

namespace headroom {

enum class PlatformKind { kNoGpu, kGb10, kDiscrete, kIntegrated };

// Where the memory budget comes from.
enum class MemorySource { kMemInfo, kNvml };

// GB10 figures (docs/architecture.md "Platform facts"; docs/gpu.md "Platform profiles").
// Sustained power: a Spark under long load settles near 100 W of GPU power against the
// 240 W printed on its power supply; NVML reports no enforced limit to compare with.
inline constexpr uint32_t kGb10SustainedPowerMw = 100'000;
inline constexpr uint32_t kGb10RatedPowerMw = 240'000;
// SM clock under load on a healthy Spark: about 2.4 GHz.
inline constexpr uint32_t kGb10NormalSmClockMhz = 2'400;
// The degraded state reported by users (spark-gpu-throttle-check README, tonyd2wild issue
// #1; third-party, not checked on hardware): P0 with clocks held at 500-850 MHz and no
// clock-event bit set, cleared only by a full power-off.
inline constexpr uint32_t kGb10DegradedSmClockMinMhz = 500;
inline constexpr uint32_t kGb10DegradedSmClockMaxMhz = 850;
// The pool of an idle Spark, for plans made elsewhere (`plan --target gb10`): MemTotal
// 127,600,748 kB (121.7 GiB) and MemAvailable 120,574,075 kB (115.0 GiB) with nothing
// running (docs/architecture.md "Platform facts"; docs/gpu.md "Platform profiles"; the
// fixture tests/fixtures/gb10-idle/proc/meminfo). MemTotal also gives the levels on a Spark
// (docs/config.md).
inline constexpr uint64_t kGb10MemTotalBytes = 127'600'748ULL * 1024;
inline constexpr uint64_t kGb10IdleMemAvailableBytes = 120'574'075ULL * 1024;

struct PlatformProfile {
  PlatformKind kind = PlatformKind::kNoGpu;
  std::string gpu_name;  // NVML name of the device profiled; empty without a GPU
  MemorySource memory_source = MemorySource::kMemInfo;
  // Device memory when it is the budget (discrete); nullopt when memory is /proc/meminfo's.
  std::optional<uint64_t> gpu_memory_bytes;
  // The power the GPU can hold for hours: GB10's observed 100 W; a discrete GPU's enforced
  // limit. nullopt when neither is known.
  std::optional<uint32_t> sustained_power_mw;
  // The nameplate figure: GB10's 240 W; a discrete GPU's enforced limit.
  std::optional<uint32_t> rated_power_mw;
  // The SM clock expected under load: GB10's 2400 MHz; a discrete GPU's max SM clock.
  std::optional<uint32_t> normal_sm_clock_mhz;
  // A clock band that means "degraded" even without a clock-event bit (GB10 only).
  std::optional<uint32_t> degraded_sm_clock_min_mhz;
  std::optional<uint32_t> degraded_sm_clock_max_mhz;
};

// Whether an NVML device name is a GB10 ("NVIDIA GB10"; matched as a substring so a
// driver's decoration of the name does not break detection).
bool IsGb10Name(std::string_view name);

// The profile of the machine from one sample of all devices (empty: no GPU). A GB10 among
// the devices wins; otherwise device 0 is profiled (multi-GPU budgets are per device and
// belong to the planner, not here).
PlatformProfile DetectPlatform(std::span<const GpuReading> gpus);

// Whether `sm_clock_mhz` falls in the profile's degraded band (false when it has none).
bool InDegradedClockBand(const PlatformProfile& profile, uint32_t sm_clock_mhz);

// "gb10", "discrete", "integrated", "none".
std::string_view PlatformKindName(PlatformKind kind);

// What the user says about the platform (config.toml [platform], HEADROOM_PLATFORM, ...;
// docs/config.md), for machines detection gets wrong or figures it cannot know: a discrete
// GPU's sustained power, a GB10 whose NVML name a shim hides.
struct PlatformOverride {
  std::optional<PlatformKind> kind;            // nullopt: keep the detected kind
  std::optional<uint32_t> sustained_power_mw;  // replaces the profile's figure
  std::optional<uint32_t> rated_power_mw;
};

// `detected` as the override describes it. A new kind brings that kind's known figures
// (GB10's 100 W / 240 W / 2400 MHz and degraded band; none clears every GPU figure) and
// drops the figures that belonged to the old kind (GB10's constants are no discrete GPU's).
// The power figures then replace the profile's, except on "none" (no GPU to judge).
PlatformProfile ApplyPlatformOverride(PlatformProfile detected, const PlatformOverride& override_);

}  // namespace headroom
