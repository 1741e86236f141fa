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

PlatformProfile ApplyPlatformOverride(PlatformProfile p, const PlatformOverride& o) {
  if (o.kind && *o.kind != p.kind) {
    if (p.kind == PlatformKind::kGb10) {
      // GB10's constants describe GB10, not whatever the user says this device is.
      p.sustained_power_mw.reset();
      p.rated_power_mw.reset();
      p.normal_sm_clock_mhz.reset();
    }
    p.degraded_sm_clock_min_mhz.reset();
    p.degraded_sm_clock_max_mhz.reset();
    p.kind = *o.kind;
    switch (*o.kind) {
      case PlatformKind::kGb10:
        p.memory_source = MemorySource::kMemInfo;
        p.gpu_memory_bytes.reset();
        p.sustained_power_mw = kGb10SustainedPowerMw;
        p.rated_power_mw = kGb10RatedPowerMw;
        p.normal_sm_clock_mhz = kGb10NormalSmClockMhz;
        p.degraded_sm_clock_min_mhz = kGb10DegradedSmClockMinMhz;
        p.degraded_sm_clock_max_mhz = kGb10DegradedSmClockMaxMhz;
        break;
      case PlatformKind::kDiscrete:
        // Device memory is the budget only where NVML gave one.
        p.memory_source = p.gpu_memory_bytes ? MemorySource::kNvml : MemorySource::kMemInfo;
        break;
      case PlatformKind::kIntegrated:
        p.memory_source = MemorySource::kMemInfo;
        p.gpu_memory_bytes.reset();
        break;
      case PlatformKind::kNoGpu:
        p = PlatformProfile{};
        break;
    }
  }
  if (p.kind == PlatformKind::kNoGpu) return p;
  if (o.sustained_power_mw) p.sustained_power_mw = o.sustained_power_mw;
  if (o.rated_power_mw) p.rated_power_mw = o.rated_power_mw;
  return p;
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
