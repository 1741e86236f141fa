#include "doctor/device_headroom.h"

#include "base/bytes.h"
#include "base/message.h"

namespace headroom {

bool JudgesDeviceMemory(const DoctorFacts& f) {
  if (f.platform.kind != PlatformKind::kDiscrete || f.gpus.empty()) return false;
  const GpuReading& g = f.gpus.front();
  return g.memory_total_bytes.value_or(0) > 0 && (g.memory_free_bytes || g.memory_used_bytes);
}

CheckResult CheckDeviceHeadroom(const DoctorFacts& f) {
  CheckResult r;
  r.id = "G3";
  r.title = MsgFrom(N_("device memory headroom"));
  const GpuReading& g = f.gpus.front();
  const uint64_t total = *g.memory_total_bytes;
  const uint64_t used = g.memory_used_bytes.value_or(0);
  const uint64_t free = g.memory_free_bytes.value_or(total > used ? total - used : 0);
  const std::string name = f.platform.gpu_name.empty() ? "device 0" : f.platform.gpu_name;
  r.details.push_back(
      Msg("{}: {} free of {} (NVML): the pool a discrete GPU's weights, gradients, optimizer "
          "states and activations draw from; the budget headroom plans the device against",
          name, FormatGiB(free), FormatGiB(total)));
  if (f.meminfo) {
    const auto available = f.meminfo->EstimatedAvailable();
    const auto mem_total = f.meminfo->total_bytes();
    if (available && mem_total) {
      r.details.push_back(
          Msg("host: MemAvailable {} of MemTotal {}: the host process and what "
              "a stack offloads draw from it",
              FormatGiB(available->bytes), FormatGiB(*mem_total)));
    }
  }
  const Message figures = Msg("{}: {} free of {}", name, FormatGiB(free), FormatGiB(total));
  r.summary = figures;
  r.verdict = CheckVerdict::kPass;
  if (static_cast<double>(free) < kLowDeviceFreeFraction * static_cast<double>(total)) {
    r.details.push_back(Msg("other processes hold the device's memory: headroom ps lists them"));
    r.verdict = CheckVerdict::kWarn;
  }
  return r;
}

}  // namespace headroom
