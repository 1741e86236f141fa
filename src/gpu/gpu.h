// The GPU seam (docs/style.md rule 5): one reading per device per sample, and the interface a
// backend implements to produce it. Nvml (gpu/nvml.h) is the real backend; tests use the
// same class against a fake libnvidia-ml (tests/fakes/fake_nvml.cc), or build readings by
// hand for the pure functions (platform profiles, clock-event decoding).
//
// Every reading is optional with its unit in the name (docs/style.md rule 7): a metric the
// driver does not support (GB10 memory, GB10 power limit), a symbol the installed library
// lacks, or a lost GPU gives nullopt, never 0, so "0 W" and "unknown" stay apart.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace headroom {

// One process holding a context on the GPU (compute list).
struct GpuProcess {
  uint32_t pid = 0;
  // Bytes; nullopt when the driver says NVML_VALUE_NOT_AVAILABLE (e.g. without permission,
  // or under some virtualisation).
  std::optional<uint64_t> used_bytes;
};

// A call that did not give its value, for the probe and the logs: which call, and why.
struct GpuCallStatus {
  std::string call;    // the symbol, e.g. "nvmlDeviceGetMemoryInfo_v2"
  int code = 0;        // nvmlReturn_t, or kGpuSymbolMissing
  std::string reason;  // "not supported", "symbol not in library", ...
};

// GpuCallStatus::code when the library does not export the symbol at all. Chosen outside
// nvmlReturn_t's range (0..30, 999) so it cannot be confused with a driver answer.
inline constexpr int kGpuSymbolMissing = -1;

struct GpuReading {
  unsigned index = 0;  // the backend's device index (NVML: PCI bus order, not CUDA order)

  // Identity.
  std::optional<std::string> name;            // "NVIDIA GB10", "NVIDIA H200"
  std::optional<std::string> uuid;            // "GPU-..."
  std::optional<std::string> driver_version;  // system-wide, e.g. "580.95.05"
  std::optional<int> cuda_driver_version;     // e.g. 13000 for CUDA 13.0
  std::optional<int> compute_capability_major;
  std::optional<int> compute_capability_minor;

  // Thermal, power, energy.
  std::optional<int> temperature_c;
  std::optional<uint32_t> power_mw;                 // NVML: 1 s average on Ampere+ (GA100 excepted)
  std::optional<uint64_t> energy_mj;                // total since the driver was (re)loaded
  std::optional<uint32_t> enforced_power_limit_mw;  // after all limiters; none on GB10

  // Clocks and why they are held down.
  std::optional<uint32_t> sm_clock_mhz;
  std::optional<uint32_t> mem_clock_mhz;
  std::optional<uint32_t> max_sm_clock_mhz;
  std::optional<uint64_t> clock_event_reasons;  // bitmask, see gpu/clock_events.h
  // Cumulative time the clocks were held by each reason since driver load, nanoseconds.
  std::optional<uint64_t> sw_power_cap_ns;
  std::optional<uint64_t> sync_boost_ns;

  // Utilization, percent over the driver's sample window.
  std::optional<uint32_t> gpu_utilization_pct;
  std::optional<uint32_t> memory_utilization_pct;

  // Device memory in bytes: nullopt on unified-memory parts (GB10, Jetson), where NVML
  // answers NOT_SUPPORTED and the budget comes from /proc/meminfo instead.
  std::optional<uint64_t> memory_total_bytes;
  std::optional<uint64_t> memory_used_bytes;
  std::optional<uint64_t> memory_free_bytes;
  std::optional<uint64_t> memory_reserved_bytes;  // only from the v2 call

  // Compute processes; nullopt when the list could not be read (empty: read, none running).
  std::optional<std::vector<GpuProcess>> processes;

  // Set when any call answered GPU_IS_LOST: an event worth an alert, not just "n/a".
  bool gpu_lost = false;
  // Every call that gave no value, in call order.
  std::vector<GpuCallStatus> unavailable;
};

// A source of GPU readings. Implementations decide how to talk to the hardware; callers
// only sample. Not thread-safe: one sampler thread owns a backend.
class GpuBackend {
 public:
  virtual ~GpuBackend() = default;
  virtual std::string_view backend_name() const = 0;  // "nvml"
  virtual unsigned device_count() const = 0;
  // Reads every metric of one device. Never fails as a whole: what cannot be read is
  // nullopt and listed in `unavailable`.
  virtual GpuReading ReadDevice(unsigned index) = 0;
};

// One reading per device, in index order.
std::vector<GpuReading> SampleAllDevices(GpuBackend& backend);

}  // namespace headroom
