// src/gpu/cuda_abi.h against the CUDA toolkit's own cuda.h, where it is installed (the CUDA
// 13 headers on the build machine; without them this file checks only what it can).
#include "gpu/cuda_abi.h"

#include <gtest/gtest.h>

#include <string_view>

#ifdef HEADROOM_HAVE_CUDA_H
#include <cuda.h>
#endif

namespace headroom {
namespace {

namespace abi = cuda_abi;

#ifdef HEADROOM_HAVE_CUDA_H
static_assert(abi::kSuccess == CUDA_SUCCESS);
static_assert(abi::kErrorInvalidValue == CUDA_ERROR_INVALID_VALUE);
static_assert(abi::kErrorOutOfMemory == CUDA_ERROR_OUT_OF_MEMORY);
static_assert(abi::kErrorNotInitialized == CUDA_ERROR_NOT_INITIALIZED);
static_assert(abi::kErrorNoDevice == CUDA_ERROR_NO_DEVICE);
static_assert(abi::kErrorInvalidDevice == CUDA_ERROR_INVALID_DEVICE);
static_assert(abi::kAttributeComputeCapabilityMajor ==
              CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
static_assert(abi::kAttributeComputeCapabilityMinor ==
              CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
static_assert(sizeof(abi::Result) == sizeof(CUresult));
static_assert(sizeof(abi::Device) == sizeof(CUdevice));
static_assert(sizeof(abi::DevicePtr) == sizeof(CUdeviceptr));

#define HEADROOM_STR2(x) #x
#define HEADROOM_STR(x) HEADROOM_STR2(x)

// cuda.h maps the unversioned names to the symbols a program links; dlsym must ask for those.
TEST(CudaAbi, VersionedSymbolNamesAreTheHeaders) {
  EXPECT_EQ(std::string_view(HEADROOM_STR(cuMemAlloc)), "cuMemAlloc_v2");
  EXPECT_EQ(std::string_view(HEADROOM_STR(cuMemFree)), "cuMemFree_v2");
  EXPECT_EQ(std::string_view(HEADROOM_STR(cuDevicePrimaryCtxRelease)),
            "cuDevicePrimaryCtxRelease_v2");
  // cuMemcpyDtoD and cuMemsetD8 go through __CUDA_API_PTDS, which is the _v2 name unless
  // per-thread default streams are asked for.
  EXPECT_EQ(std::string_view(HEADROOM_STR(cuMemcpyDtoD)), "cuMemcpyDtoD_v2");
  EXPECT_EQ(std::string_view(HEADROOM_STR(cuMemsetD8)), "cuMemsetD8_v2");
  EXPECT_EQ(std::string_view(HEADROOM_STR(cuEventDestroy)), "cuEventDestroy_v2");
  EXPECT_EQ(std::string_view(HEADROOM_STR(cuEventElapsedTime)), "cuEventElapsedTime_v2");
  EXPECT_EQ(std::string_view(HEADROOM_STR(cuEventRecord)), "cuEventRecord");
}
#else
TEST(CudaAbi, VersionedSymbolNamesAreTheHeaders) { GTEST_SKIP() << "no cuda.h on this machine"; }
#endif

}  // namespace
}  // namespace headroom
