#include "gpu/platform.h"

#include <gtest/gtest.h>

#include <vector>

namespace headroom {
namespace {

// What NVML gives on a DGX Spark (reference section 2.1): a name, power and clocks, memory
// NOT_SUPPORTED (nullopt), no enforced power limit.
GpuReading Gb10Reading() {
  GpuReading r;
  r.name = "NVIDIA GB10";
  r.power_mw = 98'500;
  r.sm_clock_mhz = 2'405;
  r.max_sm_clock_mhz = 3'003;
  return r;
}

GpuReading H200Reading() {
  GpuReading r;
  r.name = "NVIDIA H200";
  r.memory_total_bytes = 150'754'820'096ULL;
  r.enforced_power_limit_mw = 700'000;
  r.max_sm_clock_mhz = 1'980;
  return r;
}

TEST(Platform, NoDevicesIsNoGpu) {
  const PlatformProfile p = DetectPlatform({});
  EXPECT_EQ(p.kind, PlatformKind::kNoGpu);
  EXPECT_EQ(p.memory_source, MemorySource::kMemInfo);
  EXPECT_FALSE(p.sustained_power_mw);
  EXPECT_EQ(PlatformKindName(p.kind), "none");
}

TEST(Platform, Gb10UsesMeminfoAndKnownFigures) {
  const std::vector<GpuReading> gpus = {Gb10Reading()};
  const PlatformProfile p = DetectPlatform(gpus);
  EXPECT_EQ(p.kind, PlatformKind::kGb10);
  EXPECT_EQ(p.gpu_name, "NVIDIA GB10");
  EXPECT_EQ(p.memory_source, MemorySource::kMemInfo);
  EXPECT_FALSE(p.gpu_memory_bytes);
  EXPECT_EQ(p.sustained_power_mw, 100'000u);
  EXPECT_EQ(p.rated_power_mw, 240'000u);
  // The platform's normal clock, not NVML's max (3003 in the reading).
  EXPECT_EQ(p.normal_sm_clock_mhz, 2'400u);
  EXPECT_EQ(PlatformKindName(p.kind), "gb10");
}

TEST(Platform, Gb10IgnoresAShimThatFabricatesMemory) {
  // nvml-unified-shim answers SUCCESS with MemTotal; on GB10 the budget is still meminfo's.
  GpuReading r = Gb10Reading();
  r.memory_total_bytes = 127'600'748ULL * 1024;
  const std::vector<GpuReading> gpus = {r};
  const PlatformProfile p = DetectPlatform(gpus);
  EXPECT_EQ(p.kind, PlatformKind::kGb10);
  EXPECT_EQ(p.memory_source, MemorySource::kMemInfo);
  EXPECT_FALSE(p.gpu_memory_bytes);
}

TEST(Platform, DiscreteTakesMemoryAndLimitFromNvml) {
  const std::vector<GpuReading> gpus = {H200Reading()};
  const PlatformProfile p = DetectPlatform(gpus);
  EXPECT_EQ(p.kind, PlatformKind::kDiscrete);
  EXPECT_EQ(p.memory_source, MemorySource::kNvml);
  EXPECT_EQ(p.gpu_memory_bytes, 150'754'820'096ULL);
  EXPECT_EQ(p.sustained_power_mw, 700'000u);
  EXPECT_EQ(p.rated_power_mw, 700'000u);
  EXPECT_EQ(p.normal_sm_clock_mhz, 1'980u);
  EXPECT_FALSE(p.degraded_sm_clock_min_mhz);
  EXPECT_FALSE(InDegradedClockBand(p, 700));  // no band: a discrete GPU idles low
}

TEST(Platform, DiscreteWithoutLimitKeepsItUnknown) {
  GpuReading r = H200Reading();
  r.enforced_power_limit_mw.reset();
  const std::vector<GpuReading> gpus = {r};
  const PlatformProfile p = DetectPlatform(gpus);
  EXPECT_FALSE(p.sustained_power_mw);  // not 0, not a guessed 225 W as btop does
}

TEST(Platform, UnsupportedOrZeroMemoryIsIntegrated) {
  GpuReading orin;
  orin.name = "Orin (nvgpu)";
  const std::vector<GpuReading> unsupported = {orin};
  EXPECT_EQ(DetectPlatform(unsupported).kind, PlatformKind::kIntegrated);
  EXPECT_EQ(DetectPlatform(unsupported).memory_source, MemorySource::kMemInfo);

  orin.memory_total_bytes = 0;  // the "SUCCESS with total 0" signature
  const std::vector<GpuReading> zero = {orin};
  EXPECT_EQ(DetectPlatform(zero).kind, PlatformKind::kIntegrated);
  EXPECT_FALSE(DetectPlatform(zero).gpu_memory_bytes);
}

TEST(Platform, Gb10AmongDevicesWins) {
  const std::vector<GpuReading> gpus = {H200Reading(), Gb10Reading()};
  EXPECT_EQ(DetectPlatform(gpus).kind, PlatformKind::kGb10);
}

TEST(Platform, NameMatch) {
  EXPECT_TRUE(IsGb10Name("NVIDIA GB10"));
  EXPECT_TRUE(IsGb10Name("GB10"));
  EXPECT_FALSE(IsGb10Name("NVIDIA GB200"));  // "GB20..." does not contain "GB10"
  EXPECT_FALSE(IsGb10Name("NVIDIA H200"));
  EXPECT_FALSE(IsGb10Name(""));
}

TEST(Platform, Gb10DegradedBandIsInclusive) {
  const std::vector<GpuReading> gpus = {Gb10Reading()};
  const PlatformProfile p = DetectPlatform(gpus);
  EXPECT_FALSE(InDegradedClockBand(p, 499));
  EXPECT_TRUE(InDegradedClockBand(p, 500));
  EXPECT_TRUE(InDegradedClockBand(p, 700));
  EXPECT_TRUE(InDegradedClockBand(p, 850));
  EXPECT_FALSE(InDegradedClockBand(p, 851));
  EXPECT_FALSE(InDegradedClockBand(p, 2'405));
}

// The override (config.toml [platform]) on each detected kind.
TEST(PlatformOverride, NothingGivenKeepsTheProfile) {
  const std::vector<GpuReading> gpus = {H200Reading()};
  const PlatformProfile detected = DetectPlatform(gpus);
  const PlatformProfile p = ApplyPlatformOverride(detected, {});
  EXPECT_EQ(p.kind, PlatformKind::kDiscrete);
  EXPECT_EQ(p.sustained_power_mw, 700'000u);
  EXPECT_EQ(p.gpu_memory_bytes, detected.gpu_memory_bytes);
  EXPECT_EQ(p.memory_source, MemorySource::kNvml);
}

TEST(PlatformOverride, DiscretePowerFiguresReplaceTheEnforcedLimit) {
  const std::vector<GpuReading> gpus = {H200Reading()};
  const PlatformProfile p =
      ApplyPlatformOverride(DetectPlatform(gpus), {std::nullopt, 550'000u, 700'000u});
  EXPECT_EQ(p.kind, PlatformKind::kDiscrete);
  EXPECT_EQ(p.sustained_power_mw, 550'000u);
  EXPECT_EQ(p.rated_power_mw, 700'000u);
  EXPECT_EQ(p.normal_sm_clock_mhz, 1'980u);  // untouched: not an override
}

TEST(PlatformOverride, Gb10KindBringsGb10Figures) {
  // A GB10 behind a shim that reports a made-up name and a total near MemTotal: detected as
  // discrete, told it is a GB10.
  GpuReading shim = H200Reading();
  shim.name = "NVIDIA Graphics Device";
  shim.memory_total_bytes = 130'000'000'000ULL;
  const std::vector<GpuReading> gpus = {shim};
  const PlatformProfile p =
      ApplyPlatformOverride(DetectPlatform(gpus), {PlatformKind::kGb10, {}, {}});
  EXPECT_EQ(p.kind, PlatformKind::kGb10);
  EXPECT_EQ(p.memory_source, MemorySource::kMemInfo);
  EXPECT_FALSE(p.gpu_memory_bytes);
  EXPECT_EQ(p.sustained_power_mw, kGb10SustainedPowerMw);
  EXPECT_EQ(p.rated_power_mw, kGb10RatedPowerMw);
  EXPECT_EQ(p.normal_sm_clock_mhz, kGb10NormalSmClockMhz);
  EXPECT_TRUE(InDegradedClockBand(p, 700));
  EXPECT_EQ(p.gpu_name, "NVIDIA Graphics Device");
}

TEST(PlatformOverride, Gb10WithOwnPowerFigures) {
  const std::vector<GpuReading> gpus = {Gb10Reading()};
  const PlatformProfile p =
      ApplyPlatformOverride(DetectPlatform(gpus), {PlatformKind::kGb10, 120'000u, {}});
  EXPECT_EQ(p.sustained_power_mw, 120'000u);
  EXPECT_EQ(p.rated_power_mw, kGb10RatedPowerMw);
}

TEST(PlatformOverride, LeavingGb10DropsItsConstants) {
  const std::vector<GpuReading> gpus = {Gb10Reading()};
  const PlatformProfile p =
      ApplyPlatformOverride(DetectPlatform(gpus), {PlatformKind::kDiscrete, {}, {}});
  EXPECT_EQ(p.kind, PlatformKind::kDiscrete);
  EXPECT_FALSE(p.sustained_power_mw);
  EXPECT_FALSE(p.rated_power_mw);
  EXPECT_FALSE(p.normal_sm_clock_mhz);
  EXPECT_FALSE(InDegradedClockBand(p, 700));
  EXPECT_EQ(p.memory_source, MemorySource::kMemInfo);  // no device memory from NVML
}

TEST(PlatformOverride, IntegratedUsesMeminfo) {
  const std::vector<GpuReading> gpus = {H200Reading()};
  const PlatformProfile p =
      ApplyPlatformOverride(DetectPlatform(gpus), {PlatformKind::kIntegrated, {}, {}});
  EXPECT_EQ(p.kind, PlatformKind::kIntegrated);
  EXPECT_EQ(p.memory_source, MemorySource::kMemInfo);
  EXPECT_FALSE(p.gpu_memory_bytes);
  EXPECT_EQ(p.sustained_power_mw, 700'000u);  // the device's own limit stays
}

TEST(PlatformOverride, NoneClearsEveryGpuFigureAndIgnoresPower) {
  const std::vector<GpuReading> gpus = {Gb10Reading()};
  const PlatformProfile p =
      ApplyPlatformOverride(DetectPlatform(gpus), {PlatformKind::kNoGpu, 100'000u, 240'000u});
  EXPECT_EQ(p.kind, PlatformKind::kNoGpu);
  EXPECT_EQ(p.gpu_name, "");
  EXPECT_FALSE(p.sustained_power_mw);
  EXPECT_FALSE(p.rated_power_mw);
  EXPECT_FALSE(p.normal_sm_clock_mhz);
  EXPECT_EQ(p.memory_source, MemorySource::kMemInfo);
}

TEST(PlatformOverride, PowerOnAMachineWithoutGpuIsIgnored) {
  const PlatformProfile p = ApplyPlatformOverride(DetectPlatform({}), {std::nullopt, 100'000u, {}});
  EXPECT_EQ(p.kind, PlatformKind::kNoGpu);
  EXPECT_FALSE(p.sustained_power_mw);
}

TEST(PlatformOverride, SameKindKeepsDetectedFigures) {
  const std::vector<GpuReading> gpus = {H200Reading()};
  const PlatformProfile p =
      ApplyPlatformOverride(DetectPlatform(gpus), {PlatformKind::kDiscrete, {}, {}});
  EXPECT_EQ(p.sustained_power_mw, 700'000u);
  EXPECT_EQ(p.memory_source, MemorySource::kNvml);
}

}  // namespace
}  // namespace headroom
