// Sampler: one row of `headroom watch` readings (GPU via a GpuBackend, host memory, PSI, CPU
// use, hwmon and thermal sensors) per call, cheap enough to run ten times a second beside a
// training job.
//
// Sample is the in-memory form of one CSV row (samples/samples_csv.h writes and reads it): every
// reading optional with its unit in the name (docs/style.md rule 7), so a missing reading is an
// empty field, never 0. The mem.* readings are always the host's /proc/meminfo, whatever the
// platform: on GB10 that is the GPU's pool too, and on a discrete GPU the device memory is in
// the separate gpu_memory_* fields.
//
// Cost (bench/sampler_cost.cc, figures in docs/watch.md): the kernel files are opened once
// and re-read with pread into a kept buffer; the hwmon and thermal channels are found once,
// at construction, and only their value files are re-read.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/wall_time.h"
#include "gpu/gpu.h"
#include "gpu/platform.h"
#include "sys/sysroot.h"

namespace headroom {

// A sensor column beyond the fixed schema: an hwmon channel or a thermal zone, named
// "hwmon.<device>.<label>.<kind>" or "thermal.<type>" (docs/watch.md), with its unit.
struct ExtraColumn {
  std::string name;  // the CSV column name
  std::string unit;  // "C", "W", "J", "bool"
};

struct Sample {
  WallTime time{};

  // GPU (the profiled device; nullopt without NVML or when the driver has no value).
  std::optional<int> temperature_c;
  std::optional<uint32_t> power_mw;
  std::optional<uint32_t> sm_clock_mhz;
  std::optional<uint32_t> mem_clock_mhz;
  std::optional<uint64_t> clock_event_reasons;  // bitmask, gpu/clock_events.h
  std::optional<uint32_t> gpu_utilization_pct;
  std::optional<uint64_t> energy_mj;               // cumulative since driver load
  std::optional<uint64_t> gpu_memory_total_bytes;  // NVML; n/a on GB10 and Jetson
  std::optional<uint64_t> gpu_memory_used_bytes;
  // PIDs holding a compute context; nullopt when the list could not be read. Not a CSV
  // column (events report changes to it).
  std::optional<std::vector<uint32_t>> gpu_pids;
  bool gpu_lost = false;

  // Host memory, /proc/meminfo.
  std::optional<uint64_t> mem_total_bytes;
  std::optional<uint64_t> mem_available_bytes;
  std::optional<uint64_t> mem_cached_bytes;
  std::optional<uint64_t> mem_free_bytes;
  std::optional<uint64_t> swap_used_bytes;  // SwapTotal - SwapFree

  // /proc/pressure/memory, percent of the last 10 s.
  std::optional<double> psi_some_avg10_pct;
  std::optional<double> psi_full_avg10_pct;

  // Share of all CPUs' time not idle since the previous sample (/proc/stat deltas), percent.
  std::optional<double> cpu_util_pct;

  // Values of the extra sensor columns, parallel to the column list that goes with them
  // (Sampler::extra_columns(), SampleSeries::extra_columns).
  std::vector<std::optional<double>> extra;
};

// The aggregate CPU times of /proc/stat's first line ("cpu  user nice system idle iowait irq
// softirq steal ..."), in clock ticks. Guest time is already inside user and nice.
struct CpuTimes {
  uint64_t busy = 0;  // user + nice + system + irq + softirq + steal
  uint64_t idle = 0;  // idle + iowait
};

// Parses /proc/stat's "cpu " line (any field count from 4 on, as on old kernels). nullopt
// when the line is missing or malformed.
std::optional<CpuTimes> ParseProcStatCpu(std::string_view text);

// Percent of the time not idle between two readings; nullopt when no tick passed or a
// counter went backwards.
std::optional<double> CpuUtilPercent(const CpuTimes& before, const CpuTimes& after);

class Sampler {
 public:
  // Opens the kernel files below `root` and finds the sensor channels. `gpu` may be null
  // (no NVML): the GPU fields stay nullopt. One GPU reading is taken here to profile the
  // platform (DetectPlatform); the device sampled is the one profiled (a GB10 among several
  // devices, else device 0).
  Sampler(const SysRoot& root, std::unique_ptr<GpuBackend> gpu);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // One full sample stamped `now`. Never fails: what cannot be read is nullopt.
  Sample Read(WallTime now);

  const PlatformProfile& platform() const { return platform_; }
  // The user's word on the platform (config.toml [platform]); call before the first Read.
  void OverridePlatform(const PlatformOverride& o) {
    platform_ = ApplyPlatformOverride(platform_, o);
  }
  const std::vector<ExtraColumn>& extra_columns() const { return extra_columns_; }
  bool has_gpu() const { return gpu_ != nullptr; }
  // Lines worth telling the user once: files that could not be opened, the sampled device.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  struct KeptFile;  // an fd re-read with pread (sampler.cc)
  struct Channel;   // one extra column's file and scale
  static std::unique_ptr<KeptFile> OpenKept(const SysRoot& root, const std::string& relative,
                                            size_t max_bytes);

  void ReadGpu(Sample& s);
  void ReadHost(Sample& s);

  std::unique_ptr<GpuBackend> gpu_;
  unsigned gpu_index_ = 0;
  PlatformProfile platform_;
  std::unique_ptr<KeptFile> meminfo_, psi_, stat_;
  std::optional<CpuTimes> last_cpu_;
  std::vector<Channel> channels_;
  std::vector<ExtraColumn> extra_columns_;
  std::vector<std::string> notes_;
  std::string buffer_;  // scratch for pread, kept to avoid an allocation per sample
};

}  // namespace headroom
