// A fake libnvidia-ml for tests: the same C symbols with the same ABI (src/gpu/nvml_abi.h),
// answering from a scenario instead of a driver, so the real Nvml class (dlopen, dlsym,
// fallbacks, n/a handling) runs in every build without a GPU.
//
// Built twice (tests/fakes/CMakeLists.txt): libnvidia-ml-fake.so with every symbol, and
// libnvidia-ml-fake-minimal.so (FAKE_NVML_MINIMAL) without the newer optional ones, as an
// older driver would be: nvmlDeviceGetMemoryInfo_v2, nvmlDeviceGetTotalEnergyConsumption,
// nvmlDeviceGetComputeRunningProcesses_v3/_v2, nvmlDeviceGetCurrentClocksEventReasons,
// nvmlDeviceGetTemperatureV, nvmlDeviceGetFieldValues, nvmlSystemGetCudaDriverVersion_v2.
// It keeps the legacy fallbacks (MemoryInfo v1, unversioned process list, ThrottleReasons,
// GetTemperature), so the fallbacks are tested too.
//
// Scripting: nvmlInit_v2 reads the file named by HEADROOM_FAKE_NVML_SCRIPT (unset: the
// "discrete" scenario with defaults). One "key value" per line, '#' starts a comment:
//   scenario gb10|discrete|init-fail|no-device   which device to be (default discrete);
//                     no-device: init succeeds and nvmlDeviceGetCount_v2 answers 0 (a
//                     driver with every GPU hidden, e.g. CUDA_VISIBLE_DEVICES in a container)
//   degrade_after N   gb10: SM clock 2405 MHz for samples 0..N-1, 700 MHz from N (default 3)
//   lost_after N      every device call answers GPU_IS_LOST from sample N (default never)
//   temp_start_c T    temperature at sample 0 (default 45)
//   temp_step_c S     temperature rise per sample (default 3 on gb10, 1 on discrete)
//   cuda_version V    nvmlSystemGetCudaDriverVersion's answer, e.g. 12040 (default 13000 on
//                     gb10, 12080 on discrete)
//   name TEXT         discrete: the device name, the rest of the line (default NVIDIA H200)
//   memory_total_mib M  discrete: the device's memory (default an H200's 143771 MiB)
//   memory_used_mib U   discrete: the memory in use (default 81920, 80 GiB)
//   process PID MIB   a compute process with MIB MiB of GPU memory (repeatable, at most 8):
//                     when any is given, the process list is these instead of the
//                     scenario's, so a test can name a real process it started (`headroom
//                     guardian` choosing the GPU holder)
// A sample is one nvmlDeviceGetHandleByIndex_v2 call: Nvml::ReadDevice asks for the handle
// once per reading, so sample k is the (k+1)-th reading, whatever order the fields are read.
//
// Test code, not product code: reading the environment here is fine (the fake stands in for
// the driver, which reads its own configuration). No heap: state is fixed-size statics, so
// dlclose leaves nothing for LeakSanitizer.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gpu/nvml_abi.h"

namespace abi = headroom::nvml_abi;

namespace {

enum class Scenario { kDiscrete, kGb10, kInitFail, kNoDevice };

struct FakeState {
  int init_count = 0;
  Scenario scenario = Scenario::kDiscrete;
  long degrade_after = 3;
  long lost_after = -1;  // never
  long temp_start_c = 45;
  long temp_step_c = -1;   // scenario default
  long samples = 0;        // nvmlDeviceGetHandleByIndex_v2 calls since init
  long cuda_version = -1;  // scenario default
  char name[96] = "NVIDIA H200";
  unsigned long long total_bytes = 150'754'820'096ULL;  // an H200's 143771 MiB
  unsigned long long used_bytes = 85'899'345'920ULL;    // 80 GiB in use
  // Scripted compute processes ("process PID MIB"); none: the scenario's list.
  unsigned scripted_pids[8] = {};
  unsigned long long scripted_bytes[8] = {};
  unsigned scripted = 0;
};

FakeState g_state;
// The one device; its address is the nvmlDevice_t handed out.
char g_device_tag;

void LoadScript() {
  g_state = FakeState{};
  g_state.init_count = 0;
  const char* path = std::getenv("HEADROOM_FAKE_NVML_SCRIPT");
  if (path == nullptr || *path == '\0') return;
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return;
  char line[256];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (char* hash = std::strchr(line, '#')) *hash = '\0';
    char key[64], value[64];
    unsigned long long mib = 0;
    if (std::sscanf(line, "%63s %63s %llu", key, value, &mib) == 3 &&
        std::strcmp(key, "process") == 0 && g_state.scripted < 8) {
      g_state.scripted_pids[g_state.scripted] =
          static_cast<unsigned>(std::strtoul(value, nullptr, 10));
      g_state.scripted_bytes[g_state.scripted++] = mib << 20;
      continue;
    }
    if (std::sscanf(line, "%63s %63s", key, value) != 2) continue;
    if (std::strcmp(key, "scenario") == 0) {
      if (std::strcmp(value, "gb10") == 0) g_state.scenario = Scenario::kGb10;
      if (std::strcmp(value, "discrete") == 0) g_state.scenario = Scenario::kDiscrete;
      if (std::strcmp(value, "init-fail") == 0) g_state.scenario = Scenario::kInitFail;
      if (std::strcmp(value, "no-device") == 0) g_state.scenario = Scenario::kNoDevice;
    } else if (std::strcmp(key, "degrade_after") == 0) {
      g_state.degrade_after = std::strtol(value, nullptr, 10);
    } else if (std::strcmp(key, "lost_after") == 0) {
      g_state.lost_after = std::strtol(value, nullptr, 10);
    } else if (std::strcmp(key, "temp_start_c") == 0) {
      g_state.temp_start_c = std::strtol(value, nullptr, 10);
    } else if (std::strcmp(key, "temp_step_c") == 0) {
      g_state.temp_step_c = std::strtol(value, nullptr, 10);
    } else if (std::strcmp(key, "cuda_version") == 0) {
      g_state.cuda_version = std::strtol(value, nullptr, 10);
    } else if (std::strcmp(key, "memory_total_mib") == 0) {
      g_state.total_bytes = std::strtoull(value, nullptr, 10) << 20;
    } else if (std::strcmp(key, "memory_used_mib") == 0) {
      g_state.used_bytes = std::strtoull(value, nullptr, 10) << 20;
    } else if (std::strcmp(key, "name") == 0) {
      // The rest of the line after the key and its blanks, without the newline.
      const char* rest = std::strstr(line, "name") + 4;
      rest += std::strspn(rest, " \t");
      std::snprintf(g_state.name, sizeof g_state.name, "%.*s",
                    static_cast<int>(std::strcspn(rest, "\r\n")), rest);
    }
  }
  std::fclose(f);
}

bool Gb10() { return g_state.scenario == Scenario::kGb10; }
long Sample() { return g_state.samples > 0 ? g_state.samples - 1 : 0; }

// The common guard of every device call: initialised, a handle we gave out, GPU not lost.
abi::Return Check(abi::Device device) {
  if (g_state.init_count == 0) return abi::kErrorUninitialized;
  if (device != reinterpret_cast<abi::Device>(&g_device_tag)) return abi::kErrorInvalidArgument;
  if (g_state.lost_after >= 0 && Sample() >= g_state.lost_after) return abi::kErrorGpuIsLost;
  return abi::kSuccess;
}

abi::Return CopyString(const char* text, char* buffer, unsigned length) {
  if (buffer == nullptr) return abi::kErrorInvalidArgument;
  if (std::strlen(text) + 1 > length) return abi::kErrorInsufficientSize;
  std::memcpy(buffer, text, std::strlen(text) + 1);
  return abi::kSuccess;
}

// Device memory of the discrete scenario: the script's figures (default an H200's 143771 MiB
// with 80 GiB in use), with 512 MiB reserved by the driver.
constexpr unsigned long long kReservedBytes = 536'870'912ULL;
unsigned long long TotalBytes() { return g_state.total_bytes; }
unsigned long long UsedBytes() { return g_state.used_bytes; }
unsigned long long FreeBytes() {
  const unsigned long long held = g_state.used_bytes + kReservedBytes;
  return g_state.total_bytes > held ? g_state.total_bytes - held : 0;
}

// The compute processes: gb10 one (63931 MiB, the size seen in nvtop #426), discrete two,
// the second without a memory figure (NVML_VALUE_NOT_AVAILABLE).
struct FakeProcess {
  unsigned pid;
  unsigned long long used;
};
constexpr FakeProcess kGb10Processes[] = {{4242, 63'931ULL << 20}};
constexpr FakeProcess kDiscreteProcesses[] = {{1111, 40ULL << 30}, {2222, abi::kValueNotAvailable}};

template <typename Info>
abi::Return ListProcesses(abi::Device device, unsigned* count, Info* infos) {
  if (const abi::Return r = Check(device); r != abi::kSuccess) return r;
  if (count == nullptr) return abi::kErrorInvalidArgument;
  const FakeProcess* list = Gb10() ? kGb10Processes : kDiscreteProcesses;
  const bool scripted = g_state.scripted > 0;
  const unsigned n = scripted ? g_state.scripted : Gb10() ? 1 : 2;
  if (*count < n || infos == nullptr) {
    *count = n;
    return abi::kErrorInsufficientSize;
  }
  for (unsigned i = 0; i < n; ++i) {
    infos[i] = Info{};
    infos[i].pid = scripted ? g_state.scripted_pids[i] : list[i].pid;
    infos[i].used_gpu_memory = scripted ? g_state.scripted_bytes[i] : list[i].used;
  }
  *count = n;
  return abi::kSuccess;
}

}  // namespace

extern "C" {

abi::Return nvmlInit_v2() {
  if (g_state.init_count == 0) LoadScript();
  if (g_state.scenario == Scenario::kInitFail) return abi::kErrorDriverNotLoaded;
  ++g_state.init_count;
  return abi::kSuccess;
}

abi::Return nvmlShutdown() {
  if (g_state.init_count == 0) return abi::kErrorUninitialized;
  --g_state.init_count;
  return abi::kSuccess;
}

// Texts as NVML prints them (mixed case; Nvml lower-cases them for messages).
const char* nvmlErrorString(abi::Return code) {
  switch (code) {
    case abi::kSuccess:
      return "Success";
    case abi::kErrorUninitialized:
      return "Uninitialized";
    case abi::kErrorInvalidArgument:
      return "Invalid Argument";
    case abi::kErrorNotSupported:
      return "Not Supported";
    case abi::kErrorInsufficientSize:
      return "Insufficient Size";
    case abi::kErrorDriverNotLoaded:
      return "Driver Not Loaded";
    case abi::kErrorGpuIsLost:
      return "GPU is lost";
    case abi::kErrorArgumentVersionMismatch:
      return "Argument version mismatch";
    default:
      return "Unknown Error";
  }
}

abi::Return nvmlDeviceGetCount_v2(unsigned* count) {
  if (g_state.init_count == 0) return abi::kErrorUninitialized;
  *count = g_state.scenario == Scenario::kNoDevice ? 0 : 1;
  return abi::kSuccess;
}

abi::Return nvmlDeviceGetHandleByIndex_v2(unsigned index, abi::Device* device) {
  if (g_state.init_count == 0) return abi::kErrorUninitialized;
  if (index != 0 || device == nullptr) return abi::kErrorInvalidArgument;
  ++g_state.samples;
  *device = reinterpret_cast<abi::Device>(&g_device_tag);
  return abi::kSuccess;
}

abi::Return nvmlSystemGetDriverVersion(char* buffer, unsigned length) {
  if (g_state.init_count == 0) return abi::kErrorUninitialized;
  return CopyString(Gb10() ? "580.95.05" : "570.124.06", buffer, length);
}

abi::Return nvmlSystemGetCudaDriverVersion(int* version) {
  if (g_state.init_count == 0) return abi::kErrorUninitialized;
  *version = g_state.cuda_version >= 0 ? static_cast<int>(g_state.cuda_version)
             : Gb10()                  ? 13000
                                       : 12080;
  return abi::kSuccess;
}

abi::Return nvmlDeviceGetName(abi::Device device, char* buffer, unsigned length) {
  if (const abi::Return r = Check(device); r != abi::kSuccess) return r;
  return CopyString(Gb10() ? "NVIDIA GB10" : g_state.name, buffer, length);
}

abi::Return nvmlDeviceGetUUID(abi::Device device, char* buffer, unsigned length) {
  if (const abi::Return r = Check(device); r != abi::kSuccess) return r;
  return CopyString(Gb10() ? "GPU-fa6e0000-0000-0000-0000-00000000gb10"
                           : "GPU-fa6e0000-0000-0000-0000-00000000h200",
                    buffer, length);
}

abi::Return nvmlDeviceGetCudaComputeCapability(abi::Device device, int* major, int* minor) {
  if (const abi::Return r = Check(device); r != abi::kSuccess) return r;
  *major = Gb10() ? 12 : 9;  // sm_121 on GB10, sm_90 on Hopper
  *minor = Gb10() ? 1 : 0;
  return abi::kSuccess;
}

abi::Return nvmlDeviceGetTemperature(abi::Device device, int sensor, unsigned* celsius) {
  if (const abi::Return r = Check(device); r != abi::kSuccess) return r;
  if (sensor != abi::kTemperatureGpu) return abi::kErrorInvalidArgument;
  const long step = g_state.temp_step_c >= 0 ? g_state.temp_step_c : (Gb10() ? 3 : 1);
  *celsius = static_cast<unsigned>(g_state.temp_start_c + step * Sample());
  return abi::kSuccess;
}

abi::Return nvmlDeviceGetPowerUsage(abi::Device device, unsigned* milliwatts) {
  if (const abi::Return r = Check(device); r != abi::kSuccess) return r;
  // gb10: flat near the 100 W sustained figure, +-0.5 W; discrete: 350 W.
  *milliwatts = Gb10() ? 99'500 + 500 * static_cast<unsigned>(Sample() % 3) : 350'000;
  return abi::kSuccess;
}

abi::Return nvmlDeviceGetEnforcedPowerLimit(abi::Device device, unsigned* milliwatts) {
  if (const abi::Return r = Check(device); r != abi::kSuccess) return r;
  if (Gb10()) return abi::kErrorNotSupported;  // "Pwr:Usage/Cap 3W / N/A" on a Spark
  *milliwatts = 700'000;
  return abi::kSuccess;
}

abi::Return nvmlDeviceGetClockInfo(abi::Device device, int type, unsigned* mhz) {
  if (const abi::Return r = Check(device); r != abi::kSuccess) return r;
  if (type == abi::kClockSm || type == abi::kClockGraphics) {
    if (Gb10()) {
      *mhz = Sample() < g_state.degrade_after ? 2'405 : 700;
    } else {
      *mhz = 1'980;
    }
    return abi::kSuccess;
  }
  if (type == abi::kClockMem) {
    if (Gb10()) return abi::kErrorNotSupported;
    *mhz = 3'201;
    return abi::kSuccess;
  }
  return abi::kErrorInvalidArgument;
}

abi::Return nvmlDeviceGetMaxClockInfo(abi::Device device, int type, unsigned* mhz) {
  if (const abi::Return r = Check(device); r != abi::kSuccess) return r;
  if (type != abi::kClockSm) return abi::kErrorNotSupported;
  *mhz = Gb10() ? 3'003 : 1'980;
  return abi::kSuccess;
}

// gb10: no bit set even while degraded (the point of the scenario); discrete: power capped
// and SW thermal slowdown (0x04 | 0x20).
abi::Return nvmlDeviceGetCurrentClocksThrottleReasons(abi::Device device,
                                                      unsigned long long* reasons) {
  if (const abi::Return r = Check(device); r != abi::kSuccess) return r;
  *reasons = Gb10() ? 0 : 0x24;
  return abi::kSuccess;
}

abi::Return nvmlDeviceGetUtilizationRates(abi::Device device, abi::Utilization* utilization) {
  if (const abi::Return r = Check(device); r != abi::kSuccess) return r;
  *utilization = Gb10() ? abi::Utilization{96, 0} : abi::Utilization{87, 42};
  return abi::kSuccess;
}

abi::Return nvmlDeviceGetMemoryInfo(abi::Device device, abi::Memory* memory) {
  if (const abi::Return r = Check(device); r != abi::kSuccess) return r;
  if (Gb10()) return abi::kErrorNotSupported;  // iGPU: no framebuffer (header note)
  *memory = abi::Memory{TotalBytes(), FreeBytes(), UsedBytes() + kReservedBytes};
  return abi::kSuccess;
}

abi::Return nvmlDeviceGetComputeRunningProcesses(abi::Device device, unsigned* count,
                                                 abi::ProcessInfoV1* infos) {
  return ListProcesses(device, count, infos);
}

#ifndef FAKE_NVML_MINIMAL

abi::Return nvmlSystemGetCudaDriverVersion_v2(int* version) {
  return nvmlSystemGetCudaDriverVersion(version);
}

abi::Return nvmlDeviceGetTemperatureV(abi::Device device, abi::TemperatureV1* temperature) {
  if (temperature == nullptr) return abi::kErrorInvalidArgument;
  if (temperature->version != abi::kTemperatureV1Version) {
    return abi::kErrorArgumentVersionMismatch;
  }
  unsigned celsius = 0;
  const abi::Return r = nvmlDeviceGetTemperature(device, temperature->sensor_type, &celsius);
  if (r == abi::kSuccess) temperature->temperature = static_cast<int>(celsius);
  return r;
}

abi::Return nvmlDeviceGetTotalEnergyConsumption(abi::Device device,
                                                unsigned long long* millijoules) {
  if (const abi::Return r = Check(device); r != abi::kSuccess) return r;
  // One sample a second at the power above: 100 J or 350 J per sample.
  const unsigned long long per_sample = Gb10() ? 100'000 : 350'000;
  *millijoules = 5'000'000ULL + per_sample * static_cast<unsigned long long>(Sample());
  return abi::kSuccess;
}

abi::Return nvmlDeviceGetCurrentClocksEventReasons(abi::Device device,
                                                   unsigned long long* reasons) {
  return nvmlDeviceGetCurrentClocksThrottleReasons(device, reasons);
}

abi::Return nvmlDeviceGetMemoryInfo_v2(abi::Device device, abi::MemoryV2* memory) {
  if (const abi::Return r = Check(device); r != abi::kSuccess) return r;
  if (memory == nullptr) return abi::kErrorInvalidArgument;
  // What the real driver does with a wrong version word (e.g. nvtop's 2).
  if (memory->version != abi::kMemoryV2Version) return abi::kErrorArgumentVersionMismatch;
  if (Gb10()) return abi::kErrorNotSupported;
  memory->total = TotalBytes();
  memory->reserved = kReservedBytes;
  memory->used = UsedBytes();
  memory->free = FreeBytes();
  return abi::kSuccess;
}

abi::Return nvmlDeviceGetComputeRunningProcesses_v3(abi::Device device, unsigned* count,
                                                    abi::ProcessInfo* infos) {
  return ListProcesses(device, count, infos);
}

abi::Return nvmlDeviceGetComputeRunningProcesses_v2(abi::Device device, unsigned* count,
                                                    abi::ProcessInfo* infos) {
  return ListProcesses(device, count, infos);
}

// Field 74 (SW power cap ns) and 76 (sync boost ns): per-field NOT_SUPPORTED on gb10 (DCGM
// reports the violation counters dead there); on discrete 1.5 s of power capping so far
// plus one second per sample, and no sync boost.
abi::Return nvmlDeviceGetFieldValues(abi::Device device, int count, abi::FieldValue* values) {
  if (const abi::Return r = Check(device); r != abi::kSuccess) return r;
  if (count < 0 || (count > 0 && values == nullptr)) return abi::kErrorInvalidArgument;
  for (int i = 0; i < count; ++i) {
    abi::FieldValue& v = values[i];
    v.value_type = abi::kValueTypeUnsignedLongLong;
    if (Gb10()) {
      v.nvml_return = abi::kErrorNotSupported;
    } else if (v.field_id == abi::kFieldSwPowerCapNs) {
      v.nvml_return = abi::kSuccess;
      v.value.ull_val =
          1'500'000'000ULL + 1'000'000'000ULL * static_cast<unsigned long long>(Sample());
    } else if (v.field_id == abi::kFieldSyncBoostNs) {
      v.nvml_return = abi::kSuccess;
      v.value.ull_val = 0;
    } else {
      v.nvml_return = abi::kErrorNotSupported;
    }
  }
  return abi::kSuccess;
}

#endif  // FAKE_NVML_MINIMAL

}  // extern "C"
