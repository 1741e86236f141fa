// G3 on a discrete GPU: the pool that runs out is the device's own memory, so the check
// judges NVML's free memory of the first device and names it; the host's MemAvailable is
// shown beside it (the host process and offloaded tensors draw from it). Unified memory
// (GB10, Jetson, no GPU) keeps G3's host-pool check (doctor/checks.cc).
#pragma once

#include "doctor/checks.h"

namespace headroom {

// Under this share of the device's memory free, G3 warns: other processes hold the device.
inline constexpr double kLowDeviceFreeFraction = 0.10;

// Whether G3 judges the device: a discrete platform whose first device reported its memory.
bool JudgesDeviceMemory(const DoctorFacts& f);

// G3 "device memory headroom": pass with the device's free memory, warn when under
// kLowDeviceFreeFraction of its total is free.
CheckResult CheckDeviceHeadroom(const DoctorFacts& f);

}  // namespace headroom
