// Memory copy bandwidth, for `headroom bandwidth` and doctor G5.
//
// Units: GB/s with GB = 1e9 bytes, counting the bytes read plus the bytes written, as
// STREAM's Copy and CUDA's bandwidthTest (device to device) count them: a copy of N bytes
// in t seconds is 2N/t. GB10's published figures are 273 GB/s (LPDDR5X spec) and
// 180-192 GB/s measured in copy tests (docs/architecture.md), so a healthy Spark's device copy
// lands near 185 GB/s here.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/message.h"
#include "base/result.h"
#include "gpu/cuda_driver.h"

namespace headroom {

// GB10 reference figures, GB/s (GB = 1e9 bytes).
inline constexpr double kGb10SpecGbps = 273.0;
inline constexpr double kGb10MeasuredLowGbps = 180.0;
inline constexpr double kGb10MeasuredHighGbps = 192.0;
// Below this share of the measured range's low end a GB10 copy is reported as slow: 10 %
// below 180 GB/s covers run-to-run spread; more is another job copying, or clocks held down.
inline constexpr double kGb10SlowFraction = 0.9;

struct CopyMeasurement {
  Message what;                 // "host memory (2 threads)", "device 0: NVIDIA GB10"
  uint64_t bytes = 0;           // copied per repeat (read once, written once)
  int threads = 0;              // host copies; 0 for a device copy
  std::vector<double> seconds;  // one per timed repeat, in order
  // 2 x bytes / seconds / 1e9 for the median, fastest and slowest repeat.
  double median_gbps = 0;
  double best_gbps = 0;
  double worst_gbps = 0;
};

// Fills the GB/s figures from `bytes` and `seconds` (median of an even count: the mean of
// the middle two). Pure, for tests.
void Summarize(CopyMeasurement& m);

struct HostCopyOptions {
  uint64_t bytes = 1ULL << 30;  // per buffer; two buffers are allocated
  int threads = 1;              // 1..1024
  int repeats = 10;
};

// memcpy from one buffer to another, split across `threads` threads that each first touch
// their own slices (so the pages sit near the thread that copies them), all starting at one
// barrier; each repeat is timed from the barrier to the last thread's end. One untimed
// warm-up repeat first. An error when the buffers cannot be allocated.
Result<CopyMeasurement> MeasureHostCopy(const HostCopyOptions& options);

// cuMemcpyDtoD on device `index` through the driver API (see CudaDriver::TimeDeviceCopies).
Result<CopyMeasurement> MeasureDeviceCopy(const CudaDriver& cuda, int index, uint64_t bytes,
                                          int repeats);

enum class Gb10Band { kBelow, kWithin, kAbove };
// Where a device copy rate falls against GB10's measured range: below kGb10SlowFraction of
// its low end, within (from there to the high end), or above it.
Gb10Band CompareWithGb10(double gbps);

// "185.2 GB/s median (fastest 186.0, slowest 184.1; 10 repeats of 1.07 GB)".
Message DescribeCopy(const CopyMeasurement& m);

// Where a GB10 device copy falls against the measured range, as a sentence: "within GB10's
// measured 180-192 GB/s (the 273 GB/s spec is not reached by copies)".
Message Gb10BandText(const CopyMeasurement& m);

// `headroom bandwidth`: the host copy, and a copy on every CUDA device, measured in turn.
struct BandwidthOptions {
  bool host = true;  // measure host memory
  HostCopyOptions host_copy;
  bool device = true;    // measure the devices
  std::string cuda_lib;  // "" = libcuda.so.1
  uint64_t device_bytes = 1ULL << 30;
  int repeats = 10;
};

// One measurement, or why it failed.
struct CopyOutcome {
  std::optional<CopyMeasurement> copy;
  Message error;  // when copy is nullopt
};

struct DeviceCopy {
  int index = 0;
  CopyOutcome outcome;
  bool gb10 = false;  // the device's name says GB10: compared with its measured range
};

struct BandwidthReport {
  std::optional<CopyOutcome> host;  // nullopt: not asked
  std::vector<DeviceCopy> devices;
  Message device_error;  // no libcuda or no device (empty when the devices were measured)
};

BandwidthReport MeasureBandwidth(const BandwidthOptions& options);

// The host buffers' size for `headroom bandwidth`: `requested`, held to 1/8 of MemAvailable
// (`available_bytes`; 0 = unknown, no cap) so that the two buffers leave the machine room;
// `lowered` says the cap applied.
struct HostCopySize {
  uint64_t bytes = 0;
  bool lowered = false;
};
HostCopySize CapHostCopyBytes(uint64_t requested, uint64_t available_bytes);

// Whether a measurement that was asked for failed: the host copy, a device's copy, or, when
// the devices were all that was asked (`device_only`), finding no device at all.
bool BandwidthFailed(const BandwidthReport& report, bool device_only);

// bandwidth --json (schema_version 1, docs/doctor.md): "host" and "device" (each copy, or
// {"error": ...}), "device_error"; English.
nlohmann::ordered_json BandwidthToJson(const BandwidthReport& report);

}  // namespace headroom
