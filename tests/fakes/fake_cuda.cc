// A fake libcuda for tests: the driver-API symbols `headroom bandwidth` uses, with the ABI of
// src/gpu/cuda_abi.h, answering from a scenario instead of a GPU, so the real CudaDriver
// class (dlopen, dlsym, the timed copy loop, error paths) runs in every build.
//
// Scripting: cuInit reads the file named by HEADROOM_FAKE_CUDA_SCRIPT (unset: "gb10" with
// defaults). One "key value" per line, '#' starts a comment:
//   scenario gb10|discrete|no-device|init-fail
//   copy_gbps G     the device-to-device rate to emulate, GB/s counted as bytes read +
//                   written (default 185 on gb10, 3900 on discrete)
//   alloc_limit_mib M   cuMemAlloc fails with CUDA_ERROR_OUT_OF_MEMORY past M MiB in use
//                   (default 1024)
// "Device memory" is host memory, touched only in its first 1 MiB (memset and copies move at
// most that much for real). Time is a virtual device clock: a copy of N bytes advances it by
// 2N / copy_gbps, and events record it, so a caller timing copies with events measures the
// scripted rate exactly, however busy this machine is.
//
// Test code, not product code: reading the environment here is fine.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gpu/cuda_abi.h"

namespace abi = headroom::cuda_abi;

namespace {

enum class Scenario { kGb10, kDiscrete, kNoDevice, kInitFail };

struct FakeState {
  bool initialised = false;
  Scenario scenario = Scenario::kGb10;
  double copy_gbps = -1;  // scenario default
  unsigned long long alloc_limit = 1024ULL << 20;
  unsigned long long in_use = 0;
  int retained = 0;
  abi::Context current = nullptr;
  double device_seconds = 0;  // the virtual device clock
};

// Events: a fixed pool (no heap), each a recorded device time.
struct FakeEvent {
  bool used = false;
  bool recorded = false;
  double at = 0;
};
FakeEvent g_events[16];

FakeState g_state;
char g_context_tag;
constexpr size_t kRealCopyBytes = 1 << 20;

void LoadScript() {
  g_state = FakeState{};
  const char* path = std::getenv("HEADROOM_FAKE_CUDA_SCRIPT");
  if (path == nullptr || *path == '\0') return;
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return;
  char line[256];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (char* hash = std::strchr(line, '#')) *hash = '\0';
    char key[64], value[64];
    if (std::sscanf(line, "%63s %63s", key, value) != 2) continue;
    if (std::strcmp(key, "scenario") == 0) {
      if (std::strcmp(value, "gb10") == 0) g_state.scenario = Scenario::kGb10;
      if (std::strcmp(value, "discrete") == 0) g_state.scenario = Scenario::kDiscrete;
      if (std::strcmp(value, "no-device") == 0) g_state.scenario = Scenario::kNoDevice;
      if (std::strcmp(value, "init-fail") == 0) g_state.scenario = Scenario::kInitFail;
    } else if (std::strcmp(key, "copy_gbps") == 0) {
      g_state.copy_gbps = std::strtod(value, nullptr);
    } else if (std::strcmp(key, "alloc_limit_mib") == 0) {
      g_state.alloc_limit = std::strtoull(value, nullptr, 10) << 20;
    }
  }
  std::fclose(f);
}

bool Gb10() { return g_state.scenario == Scenario::kGb10; }
int DeviceCount() { return g_state.scenario == Scenario::kNoDevice ? 0 : 1; }

// Each allocation carries its size in front of the bytes handed out.
struct Block {
  unsigned long long size;
};

}  // namespace

extern "C" {

abi::Result cuInit(unsigned int flags) {
  if (flags != 0) return abi::kErrorInvalidValue;
  LoadScript();
  if (g_state.scenario == Scenario::kInitFail) return abi::kErrorNoDevice;
  g_state.initialised = true;
  return abi::kSuccess;
}

abi::Result cuGetErrorString(abi::Result error, const char** text) {
  if (text == nullptr) return abi::kErrorInvalidValue;
  switch (error) {
    case abi::kSuccess:
      *text = "no error";
      break;
    case abi::kErrorInvalidValue:
      *text = "invalid argument";
      break;
    case abi::kErrorOutOfMemory:
      *text = "out of memory";
      break;
    case abi::kErrorNotInitialized:
      *text = "initialization error";
      break;
    case abi::kErrorNoDevice:
      *text = "no CUDA-capable device is detected";
      break;
    case abi::kErrorInvalidDevice:
      *text = "invalid device ordinal";
      break;
    default:
      *text = nullptr;
      return abi::kErrorInvalidValue;
  }
  return abi::kSuccess;
}

abi::Result cuDriverGetVersion(int* version) {
  if (version == nullptr) return abi::kErrorInvalidValue;
  *version = Gb10() ? 13000 : 12080;
  return abi::kSuccess;
}

abi::Result cuDeviceGetCount(int* count) {
  if (!g_state.initialised) return abi::kErrorNotInitialized;
  if (count == nullptr) return abi::kErrorInvalidValue;
  *count = DeviceCount();
  return abi::kSuccess;
}

abi::Result cuDeviceGet(abi::Device* device, int ordinal) {
  if (!g_state.initialised) return abi::kErrorNotInitialized;
  if (device == nullptr) return abi::kErrorInvalidValue;
  if (ordinal < 0 || ordinal >= DeviceCount()) return abi::kErrorInvalidDevice;
  *device = ordinal;
  return abi::kSuccess;
}

abi::Result cuDeviceGetName(char* name, int length, abi::Device device) {
  if (!g_state.initialised) return abi::kErrorNotInitialized;
  if (device < 0 || device >= DeviceCount()) return abi::kErrorInvalidDevice;
  const char* text = Gb10() ? "NVIDIA GB10" : "NVIDIA H200";
  if (name == nullptr || length <= static_cast<int>(std::strlen(text)))
    return abi::kErrorInvalidValue;
  std::memcpy(name, text, std::strlen(text) + 1);
  return abi::kSuccess;
}

abi::Result cuDeviceGetAttribute(int* value, int attribute, abi::Device device) {
  if (!g_state.initialised) return abi::kErrorNotInitialized;
  if (device < 0 || device >= DeviceCount()) return abi::kErrorInvalidDevice;
  if (value == nullptr) return abi::kErrorInvalidValue;
  if (attribute == abi::kAttributeComputeCapabilityMajor) {
    *value = Gb10() ? 12 : 9;
  } else if (attribute == abi::kAttributeComputeCapabilityMinor) {
    *value = Gb10() ? 1 : 0;
  } else {
    return abi::kErrorInvalidValue;
  }
  return abi::kSuccess;
}

abi::Result cuDevicePrimaryCtxRetain(abi::Context* context, abi::Device device) {
  if (!g_state.initialised) return abi::kErrorNotInitialized;
  if (device < 0 || device >= DeviceCount()) return abi::kErrorInvalidDevice;
  if (context == nullptr) return abi::kErrorInvalidValue;
  ++g_state.retained;
  *context = reinterpret_cast<abi::Context>(&g_context_tag);
  return abi::kSuccess;
}

abi::Result cuDevicePrimaryCtxRelease_v2(abi::Device device) {
  if (device < 0 || device >= DeviceCount() || g_state.retained == 0)
    return abi::kErrorInvalidDevice;
  --g_state.retained;
  return abi::kSuccess;
}

abi::Result cuCtxSetCurrent(abi::Context context) {
  g_state.current = context;
  return abi::kSuccess;
}

abi::Result cuCtxSynchronize() {
  return g_state.current != nullptr ? abi::kSuccess : abi::kErrorInvalidValue;
}

abi::Result cuMemAlloc_v2(abi::DevicePtr* pointer, size_t bytes) {
  if (g_state.current == nullptr) return abi::kErrorInvalidValue;
  if (pointer == nullptr || bytes == 0) return abi::kErrorInvalidValue;
  if (g_state.in_use + bytes > g_state.alloc_limit) return abi::kErrorOutOfMemory;
  void* block = std::malloc(sizeof(Block) + bytes);
  if (block == nullptr) return abi::kErrorOutOfMemory;
  static_cast<Block*>(block)->size = bytes;
  g_state.in_use += bytes;
  *pointer = reinterpret_cast<abi::DevicePtr>(static_cast<char*>(block) + sizeof(Block));
  return abi::kSuccess;
}

abi::Result cuMemFree_v2(abi::DevicePtr pointer) {
  if (pointer == 0) return abi::kErrorInvalidValue;
  char* block = reinterpret_cast<char*>(pointer) - sizeof(Block);
  g_state.in_use -= reinterpret_cast<Block*>(block)->size;
  std::free(block);
  return abi::kSuccess;
}

abi::Result cuMemsetD8_v2(abi::DevicePtr destination, unsigned char value, size_t bytes) {
  if (g_state.current == nullptr || destination == 0) return abi::kErrorInvalidValue;
  std::memset(reinterpret_cast<void*>(destination), value,
              bytes < kRealCopyBytes ? bytes : kRealCopyBytes);
  return abi::kSuccess;
}

abi::Result cuMemcpyDtoD_v2(abi::DevicePtr destination, abi::DevicePtr source, size_t bytes) {
  if (g_state.current == nullptr || destination == 0 || source == 0) return abi::kErrorInvalidValue;
  std::memcpy(reinterpret_cast<void*>(destination), reinterpret_cast<const void*>(source),
              bytes < kRealCopyBytes ? bytes : kRealCopyBytes);
  const double gbps = g_state.copy_gbps > 0 ? g_state.copy_gbps : (Gb10() ? 185.0 : 3900.0);
  g_state.device_seconds += 2.0 * static_cast<double>(bytes) / (gbps * 1e9);
  return abi::kSuccess;
}

abi::Result cuEventCreate(abi::Event* event, unsigned int flags) {
  if (g_state.current == nullptr || event == nullptr || flags != 0) return abi::kErrorInvalidValue;
  for (auto& e : g_events) {
    if (!e.used) {
      e = FakeEvent{true, false, 0};
      *event = reinterpret_cast<abi::Event>(&e);
      return abi::kSuccess;
    }
  }
  return abi::kErrorOutOfMemory;
}

FakeEvent* EventOf(abi::Event event) {
  for (auto& e : g_events) {
    if (reinterpret_cast<abi::Event>(&e) == event && e.used) return &e;
  }
  return nullptr;
}

abi::Result cuEventRecord(abi::Event event, abi::Stream stream) {
  FakeEvent* e = EventOf(event);
  if (e == nullptr || stream != nullptr) return abi::kErrorInvalidValue;
  e->recorded = true;
  e->at = g_state.device_seconds;
  return abi::kSuccess;
}

abi::Result cuEventSynchronize(abi::Event event) {
  return EventOf(event) != nullptr ? abi::kSuccess : abi::kErrorInvalidValue;
}

abi::Result cuEventElapsedTime_v2(float* milliseconds, abi::Event start, abi::Event end) {
  FakeEvent* a = EventOf(start);
  FakeEvent* b = EventOf(end);
  if (a == nullptr || b == nullptr || milliseconds == nullptr || !a->recorded || !b->recorded) {
    return abi::kErrorInvalidValue;
  }
  *milliseconds = static_cast<float>((b->at - a->at) * 1e3);
  return abi::kSuccess;
}

abi::Result cuEventDestroy_v2(abi::Event event) {
  FakeEvent* e = EventOf(event);
  if (e == nullptr) return abi::kErrorInvalidValue;
  e->used = false;
  return abi::kSuccess;
}

}  // extern "C"
