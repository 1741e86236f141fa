// The C ABI of libcuda (the CUDA driver API) that `headroom bandwidth` uses: result codes,
// attribute numbers and function types, written from the CUDA 13.0 toolkit's cuda.h (the
// versioned symbol names are the ones its #defines map to: cuMemAlloc -> cuMemAlloc_v2 ...),
// not by including it, so the build needs no toolkit. Shared by src/gpu/cuda_driver.cc and
// tests/fakes/fake_cuda.cc; gpu/cuda_abi_test.cc checks the values against cuda.h where the
// toolkit's headers are installed.
//
// No <dlfcn.h> here: only cuda_driver.cc loads the library.
#pragma once

#include <cstddef>

namespace headroom::cuda_abi {

using Result = int;                    // CUresult: a C enum, int-sized on LP64
using Device = int;                    // CUdevice (CUdevice_v1)
using DevicePtr = unsigned long long;  // CUdeviceptr (CUdeviceptr_v2) on 64-bit hosts
struct CtxSt;
using Context = CtxSt*;  // CUcontext
struct EventSt;
using Event = EventSt*;  // CUevent
struct StreamSt;
using Stream = StreamSt*;  // CUstream; nullptr is the legacy default stream

inline constexpr Result kSuccess = 0;
inline constexpr Result kErrorInvalidValue = 1;
inline constexpr Result kErrorOutOfMemory = 2;
inline constexpr Result kErrorNotInitialized = 3;
inline constexpr Result kErrorNoDevice = 100;
inline constexpr Result kErrorInvalidDevice = 101;

inline constexpr int kAttributeComputeCapabilityMajor = 75;
inline constexpr int kAttributeComputeCapabilityMinor = 76;

using InitFn = Result (*)(unsigned int flags);
using DriverGetVersionFn = Result (*)(int* version);
using DeviceGetCountFn = Result (*)(int* count);
using DeviceGetFn = Result (*)(Device* device, int ordinal);
using DeviceGetNameFn = Result (*)(char* name, int length, Device device);
using DeviceGetAttributeFn = Result (*)(int* value, int attribute, Device device);
using PrimaryCtxRetainFn = Result (*)(Context* context, Device device);
using PrimaryCtxReleaseFn = Result (*)(Device device);
using CtxSetCurrentFn = Result (*)(Context context);
using CtxSynchronizeFn = Result (*)();
using MemAllocFn = Result (*)(DevicePtr* pointer, size_t bytes);
using MemFreeFn = Result (*)(DevicePtr pointer);
using MemcpyDtoDFn = Result (*)(DevicePtr destination, DevicePtr source, size_t bytes);
using MemsetD8Fn = Result (*)(DevicePtr destination, unsigned char value, size_t bytes);
using GetErrorStringFn = Result (*)(Result error, const char** text);
using EventCreateFn = Result (*)(Event* event, unsigned int flags);
using EventRecordFn = Result (*)(Event event, Stream stream);
using EventSynchronizeFn = Result (*)(Event event);
using EventElapsedTimeFn = Result (*)(float* milliseconds, Event start, Event end);
using EventDestroyFn = Result (*)(Event event);

}  // namespace headroom::cuda_abi
