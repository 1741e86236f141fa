// The C ABI of libnvidia-ml that headroom uses: return codes, enum values, struct layouts,
// version words and function types. Written from the facts of
// the public NVML header (docs/gpu.md "Loading NVML"; checked against NVIDIA/go-nvml
// gen/nvml/nvml.h @ 2f9e261, NVML_API_VERSION 13), not by including nvml.h, so the build
// needs no CUDA toolkit. Shared by src/gpu/nvml.cc (the caller) and tests/fakes/fake_nvml.cc
// (the fake library), so the two can only disagree with the real header, and the
// static_asserts below pin the sizes and offsets the header has on x86_64 and aarch64.
//
// No <dlfcn.h> here: only nvml.cc loads the library (docs/style.md rule 6).
#pragma once

#include <cstddef>
#include <cstdint>

namespace headroom::nvml_abi {

// nvmlReturn_t is a C enum: int-sized on every Linux ABI we target (LP64 x86_64, aarch64).
using Return = int;

// nvmlReturn_t values (reference section 1.6).
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorUninitialized = 1;
inline constexpr Return kErrorInvalidArgument = 2;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorNoPermission = 4;
inline constexpr Return kErrorNotFound = 6;
inline constexpr Return kErrorInsufficientSize = 7;
inline constexpr Return kErrorDriverNotLoaded = 9;
inline constexpr Return kErrorFunctionNotFound = 13;
inline constexpr Return kErrorGpuIsLost = 15;
inline constexpr Return kErrorLibRmVersionMismatch = 18;
inline constexpr Return kErrorArgumentVersionMismatch = 25;
inline constexpr Return kErrorUnknown = 999;

// nvmlDevice_t: an opaque `struct nvmlDevice_st*`.
struct DeviceSt;
using Device = DeviceSt*;

// nvmlClockType_t: GRAPHICS=0, SM=1, MEM=2, VIDEO=3.
inline constexpr int kClockGraphics = 0;
inline constexpr int kClockSm = 1;
inline constexpr int kClockMem = 2;

// nvmlTemperatureSensors_t: NVML_TEMPERATURE_GPU = 0 is the only sensor (COUNT = 1).
inline constexpr int kTemperatureGpu = 0;

// Buffer sizes: NVML_DEVICE_NAME_V2_BUFFER_SIZE and NVML_DEVICE_UUID_V2_BUFFER_SIZE are 96
// (the name is documented as at most 96 bytes with its NUL; the old 64 is too short);
// NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE is 80.
inline constexpr unsigned kDeviceNameBufferSize = 96;
inline constexpr unsigned kDeviceUuidBufferSize = 96;
inline constexpr unsigned kDriverVersionBufferSize = 80;

// NVML_VALUE_NOT_AVAILABLE is (-1); in a u64 field such as usedGpuMemory it reads all ones.
inline constexpr unsigned long long kValueNotAvailable = ~0ULL;

// nvmlUtilization_t: percent over the driver's last sample period (1/6 s to 1 s).
struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};

// nvmlMemory_t (v1): bytes; used = reserved + allocated.
struct Memory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

// nvmlMemory_v2_t: `version` must be NVML_STRUCT_VERSION(Memory, 2) = sizeof | 2 << 24.
struct MemoryV2 {
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
// The header's nvmlMemory_v2. Not 2: the doc text says "must be 2", but the call then fails
// with ARGUMENT_VERSION_MISMATCH (nvtop HEAD sets 2 and silently falls back to v1).
inline constexpr unsigned int kMemoryV2Version =
    static_cast<unsigned int>(sizeof(MemoryV2)) | (2U << 24);

// nvmlTemperature_v1_t, for nvmlDeviceGetTemperatureV (NVML 12.8+). Signed temperature.
struct TemperatureV1 {
  unsigned int version;
  int sensor_type;  // nvmlTemperatureSensors_t
  int temperature;  // degrees C
};
inline constexpr unsigned int kTemperatureV1Version =
    static_cast<unsigned int>(sizeof(TemperatureV1)) | (1U << 24);

// nvmlProcessInfo_v1_t: what the unversioned nvmlDeviceGetComputeRunningProcesses takes.
struct ProcessInfoV1 {
  unsigned int pid;
  unsigned long long used_gpu_memory;  // bytes, or kValueNotAvailable
};

// nvmlProcessInfo_t (= nvmlProcessInfo_v2_t): what the _v2 and _v3 process calls take.
struct ProcessInfo {
  unsigned int pid;
  unsigned long long used_gpu_memory;  // bytes, or kValueNotAvailable
  unsigned int gpu_instance_id;        // 0xFFFFFFFF when MIG is off
  unsigned int compute_instance_id;    // 0xFFFFFFFF when MIG is off
};

// nvmlValueType_t values that carry an unsigned integer.
inline constexpr int kValueTypeUnsignedInt = 1;
inline constexpr int kValueTypeUnsignedLong = 2;
inline constexpr int kValueTypeUnsignedLongLong = 3;

// nvmlValue_t: an 8-byte union.
union Value {
  double d_val;
  unsigned int ui_val;
  unsigned long ul_val;
  unsigned long long ull_val;
  long long sll_val;
  int si_val;
  unsigned short us_val;
};

// nvmlFieldValue_t, for nvmlDeviceGetFieldValues.
struct FieldValue {
  unsigned int field_id;
  unsigned int scope_id;
  long long timestamp;     // microseconds since the epoch
  long long latency_usec;  // how stale the value may be
  int value_type;          // nvmlValueType_t
  Return nvml_return;      // per field: NOT_SUPPORTED here does not fail the batch
  Value value;
};

// Field ids of the cumulative clock-event counters, in nanoseconds (reference section 1.5).
// NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP and _SYNC_BOOST are defined in the header as
// the long-standing NVML_FI_DEV_PERF_POLICY_POWER (74) and _SYNC_BOOST (76). The three
// slowdown counters (SW/HW thermal, HW power brake) are deliberately not read: the CUDA 13
// header numbers them 269-271 while 12.9 headers and the 580 driver's nvidia-smi use
// 251-253, which CUDA 13 reuses for power smoothing, so an id could mean another quantity.
inline constexpr unsigned int kFieldSwPowerCapNs = 74;
inline constexpr unsigned int kFieldSyncBoostNs = 76;

// Layouts as the header has them on LP64 (checked with gcc x86_64 and clang aarch64 in the
// reference). A mismatch here would make every call read garbage, so it fails the build.
static_assert(sizeof(Utilization) == 8);
static_assert(sizeof(Memory) == 24);
static_assert(sizeof(MemoryV2) == 40 && offsetof(MemoryV2, total) == 8);
static_assert(kMemoryV2Version == 0x02000028);
static_assert(sizeof(TemperatureV1) == 12);
static_assert(kTemperatureV1Version == 0x0100000C);
static_assert(sizeof(ProcessInfoV1) == 16);
static_assert(sizeof(ProcessInfo) == 24 && offsetof(ProcessInfo, used_gpu_memory) == 8 &&
              offsetof(ProcessInfo, gpu_instance_id) == 16 &&
              offsetof(ProcessInfo, compute_instance_id) == 20);
static_assert(sizeof(Value) == 8);
static_assert(sizeof(FieldValue) == 40 && offsetof(FieldValue, timestamp) == 8 &&
              offsetof(FieldValue, value_type) == 24 && offsetof(FieldValue, nvml_return) == 28 &&
              offsetof(FieldValue, value) == 32);

// Function types, one per symbol (reference section 1.2). Every one returns nvmlReturn_t,
// except nvmlErrorString.
extern "C" {
using InitFn = Return (*)();
using ShutdownFn = Return (*)();
using ErrorStringFn = const char* (*)(Return);
using DeviceGetCountFn = Return (*)(unsigned int* count);
using DeviceGetHandleByIndexFn = Return (*)(unsigned int index, Device* device);
using SystemGetStringFn = Return (*)(char* buffer, unsigned int length);
using SystemGetCudaDriverVersionFn = Return (*)(int* version);
using DeviceGetStringFn = Return (*)(Device, char* buffer, unsigned int length);
using DeviceGetComputeCapabilityFn = Return (*)(Device, int* major, int* minor);
using DeviceGetTemperatureVFn = Return (*)(Device, TemperatureV1* temperature);
using DeviceGetTemperatureFn = Return (*)(Device, int sensor, unsigned int* celsius);
using DeviceGetUintFn = Return (*)(Device, unsigned int* value);
using DeviceGetUllFn = Return (*)(Device, unsigned long long* value);
using DeviceGetClockFn = Return (*)(Device, int clock_type, unsigned int* mhz);
using DeviceGetUtilizationFn = Return (*)(Device, Utilization* utilization);
using DeviceGetMemoryInfoFn = Return (*)(Device, Memory* memory);
using DeviceGetMemoryInfoV2Fn = Return (*)(Device, MemoryV2* memory);
using DeviceGetProcessesFn = Return (*)(Device, unsigned int* count, ProcessInfo* infos);
using DeviceGetProcessesV1Fn = Return (*)(Device, unsigned int* count, ProcessInfoV1* infos);
using DeviceGetFieldValuesFn = Return (*)(Device, int count, FieldValue* values);
}

}  // namespace headroom::nvml_abi
