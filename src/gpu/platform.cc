// Implementation notes.
//
// A device counts as having its own memory only when NVML gave a non-zero total. The
// reference (section 2.1) lists three unified-memory signatures: NOT_SUPPORTED (nullopt
// here), SUCCESS with total 0, and SUCCESS with a total near MemTotal from a shim library
// that fabricates it from /proc/meminfo. The first two are caught by the total; the third
// only on GB10, by name, which is why the name check comes first and GB10's memory is
// always /proc/meminfo's whatever NVML says.
#include "gpu/platform.h"

namespace headroom {

bool IsGb10Name(std::string_view name) { return name.find("GB10") != std::string_view::npos; }

PlatformProfile DetectPlatform(std::span<const GpuReading> gpus) {
  PlatformProfile profile;
  if (gpus.empty()) return profile;

  for (const GpuReading& gpu : gpus) {
    if (gpu.name && IsGb10Name(*gpu.name)) {
      profile.kind = PlatformKind::kGb10;
      profile.gpu_name = *gpu.name;
      profile.memory_source = MemorySource::kMemInfo;
      profile.sustained_power_mw = kGb10SustainedPowerMw;
      profile.rated_power_mw = kGb10RatedPowerMw;
      profile.normal_sm_clock_mhz = kGb10NormalSmClockMhz;
      profile.degraded_sm_clock_min_mhz = kGb10DegradedSmClockMinMhz;
      profile.degraded_sm_clock_max_mhz = kGb10DegradedSmClockMaxMhz;
      return profile;
    }
  }

  const GpuReading& gpu = gpus.front();
  profile.gpu_name = gpu.name.value_or("");
  profile.sustained_power_mw = gpu.enforced_power_limit_mw;
  profile.rated_power_mw = gpu.enforced_power_limit_mw;
  profile.normal_sm_clock_mhz = gpu.max_sm_clock_mhz;
  if (gpu.memory_total_bytes.value_or(0) > 0) {
    profile.kind = PlatformKind::kDiscrete;
    profile.memory_source = MemorySource::kNvml;
    profile.gpu_memory_bytes = gpu.memory_total_bytes;
  } else {
    profile.kind = PlatformKind::kIntegrated;
    profile.memory_source = MemorySource::kMemInfo;
  }
  return profile;
}

bool InDegradedClockBand(const PlatformProfile& profile, uint32_t sm_clock_mhz) {
  if (!profile.degraded_sm_clock_min_mhz || !profile.degraded_sm_clock_max_mhz) return false;
  return sm_clock_mhz >= *profile.degraded_sm_clock_min_mhz &&
         sm_clock_mhz <= *profile.degraded_sm_clock_max_mhz;
}

std::string_view PlatformKindName(PlatformKind kind) {
  switch (kind) {
    case PlatformKind::kGb10:
      return "gb10";
    case PlatformKind::kDiscrete:
      return "discrete";
    case PlatformKind::kIntegrated:
      return "integrated";
    case PlatformKind::kNoGpu:
      break;
  }
  return "none";
}

}  // namespace headroom
