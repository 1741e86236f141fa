#include "gpu/gpu.h"

namespace headroom {

std::vector<GpuReading> SampleAllDevices(GpuBackend& backend) {
  std::vector<GpuReading> readings;
  const unsigned count = backend.device_count();
  readings.reserve(count);
  for (unsigned i = 0; i < count; ++i) readings.push_back(backend.ReadDevice(i));
  return readings;
}

}  // namespace headroom
