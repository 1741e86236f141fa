// nvml_probe: opens libnvidia-ml through the same Nvml class headroom uses and prints every
// symbol it resolved and every reading with its status, so one run on a real machine (an
// H200 box, a DGX Spark) shows what the driver answers before anyone relies on it.
//
//   nvml_probe [--nvml-lib PATH] [--samples N]
//
// The library is --nvml-lib, else $HEADROOM_NVML_LIB, else libnvidia-ml.so.1 (this is a
// main, so it may read the environment; the library below it does not). With --samples N
// it reads N times, one second apart, to show counters and clocks moving. Exit status 0
// when the library opened, 1 when not (the message says why), 2 on a usage error.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "gpu/clock_events.h"
#include "gpu/nvml.h"
#include "gpu/platform.h"

namespace {

using headroom::GpuReading;

template <typename T>
void PrintField(const char* name, const std::optional<T>& value) {
  if (!value) {
    std::printf("  %-26s n/a\n", name);
  } else if constexpr (std::is_same_v<T, std::string>) {
    std::printf("  %-26s %s\n", name, value->c_str());
  } else if constexpr (std::is_signed_v<T>) {
    std::printf("  %-26s %lld\n", name, static_cast<long long>(*value));
  } else {
    std::printf("  %-26s %llu\n", name, static_cast<unsigned long long>(*value));
  }
}

void PrintReading(const GpuReading& r) {
  std::printf("device %u:\n", r.index);
  PrintField("name", r.name);
  PrintField("uuid", r.uuid);
  PrintField("driver_version", r.driver_version);
  PrintField("cuda_driver_version", r.cuda_driver_version);
  PrintField("compute_capability_major", r.compute_capability_major);
  PrintField("compute_capability_minor", r.compute_capability_minor);
  PrintField("temperature_c", r.temperature_c);
  PrintField("power_mw", r.power_mw);
  PrintField("energy_mj", r.energy_mj);
  PrintField("enforced_power_limit_mw", r.enforced_power_limit_mw);
  PrintField("sm_clock_mhz", r.sm_clock_mhz);
  PrintField("mem_clock_mhz", r.mem_clock_mhz);
  PrintField("max_sm_clock_mhz", r.max_sm_clock_mhz);
  if (r.clock_event_reasons) {
    std::string names;
    for (const std::string& n : headroom::DecodeClockEventReasons(*r.clock_event_reasons)) {
      names += (names.empty() ? "" : ",") + n;
    }
    std::printf("  %-26s 0x%llx (%s)\n", "clock_event_reasons",
                static_cast<unsigned long long>(*r.clock_event_reasons),
                names.empty() ? "none" : names.c_str());
  } else {
    PrintField("clock_event_reasons", r.clock_event_reasons);
  }
  PrintField("sw_power_cap_ns", r.sw_power_cap_ns);
  PrintField("sync_boost_ns", r.sync_boost_ns);
  PrintField("gpu_utilization_pct", r.gpu_utilization_pct);
  PrintField("memory_utilization_pct", r.memory_utilization_pct);
  PrintField("memory_total_bytes", r.memory_total_bytes);
  PrintField("memory_used_bytes", r.memory_used_bytes);
  PrintField("memory_free_bytes", r.memory_free_bytes);
  PrintField("memory_reserved_bytes", r.memory_reserved_bytes);
  if (r.processes) {
    std::printf("  %-26s %zu\n", "processes", r.processes->size());
    for (const headroom::GpuProcess& p : *r.processes) {
      std::printf("    pid %u used_bytes %s\n", p.pid,
                  p.used_bytes ? std::to_string(*p.used_bytes).c_str() : "n/a");
    }
  } else {
    std::printf("  %-26s n/a\n", "processes");
  }
  std::printf("  %-26s %s\n", "gpu_lost", r.gpu_lost ? "yes" : "no");
  for (const headroom::GpuCallStatus& s : r.unavailable) {
    std::printf("  unavailable: %s: %s\n", s.call.c_str(), s.reason.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string flag;
  int samples = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--nvml-lib") == 0 && i + 1 < argc) {
      flag = argv[++i];
    } else if (std::strcmp(argv[i], "--samples") == 0 && i + 1 < argc) {
      samples = std::atoi(argv[++i]);
      if (samples < 1) samples = 1;
    } else {
      std::fprintf(stderr, "usage: nvml_probe [--nvml-lib PATH] [--samples N]\n");
      return 2;
    }
  }

  auto nvml = headroom::Nvml::Open(headroom::ResolveNvmlLibrary(flag, std::getenv));
  if (!nvml.ok()) {
    std::fprintf(stderr, "headroom: %s\n", EnglishText(nvml.error().what).c_str());
    return 1;
  }
  std::printf("library: %s\n", (*nvml)->library_path().c_str());
  for (const headroom::NvmlSymbolStatus& s : (*nvml)->Symbols()) {
    std::printf("  symbol %-44.*s %s%s\n", static_cast<int>(s.wanted.size()), s.wanted.data(),
                s.resolved.empty() ? "missing" : std::string(s.resolved).c_str(),
                s.required ? " (required)" : "");
  }
  std::printf("devices: %u\n", (*nvml)->device_count());
  for (int sample = 0; sample < samples; ++sample) {
    if (sample > 0) ::sleep(1);
    std::printf("sample %d\n", sample);
    const std::vector<GpuReading> readings = headroom::SampleAllDevices(**nvml);
    for (const GpuReading& r : readings) PrintReading(r);
    const headroom::PlatformProfile profile = headroom::DetectPlatform(readings);
    std::printf("platform: %s, memory from %s\n",
                std::string(headroom::PlatformKindName(profile.kind)).c_str(),
                profile.memory_source == headroom::MemorySource::kNvml ? "nvml" : "/proc/meminfo");
  }
  return 0;
}
