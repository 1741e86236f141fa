// The CUDA driver API, loaded with dlopen (libcuda.so.1), for what NVML cannot do: run a
// device-to-device copy to measure memory bandwidth (`headroom bandwidth`, doctor G5).
//
// Loaded at run time so the same binary runs on machines without a driver; tests load the
// fake in tests/fakes/fake_cuda.cc through the same code (--cuda-lib / $HEADROOM_CUDA_LIB).
// The driver API, not the runtime (libcudart): the driver library is the one every machine
// with an NVIDIA driver has, whatever CUDA toolkit is (or is not) installed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"

namespace headroom {

inline constexpr std::string_view kCudaDefaultLibrary = "libcuda.so.1";

// --cuda-lib if given, else $HEADROOM_CUDA_LIB, else "" (Open's default). Read by the CLI.
std::string ResolveCudaLibrary(std::string_view flag,
                               const std::function<const char*(const char*)>& getenv);

struct CudaDeviceInfo {
  int index = 0;
  std::string name;  // "NVIDIA GB10"
  int cc_major = 0;
  int cc_minor = 0;
};

class CudaDriver {
 public:
  // dlopen, dlsym of every symbol below (all required), cuInit(0). Errors read
  //   cuda: dlopen(PATH): <dlerror text>
  //   cuda: dlsym(cuMemAlloc_v2): <dlerror text>
  //   cuda: cuInit(): <cuGetErrorString text> (cuda error N)
  static Result<std::unique_ptr<CudaDriver>> Open(const std::string& library_path = {});
  ~CudaDriver();
  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

  const std::string& library_path() const { return library_path_; }
  int driver_version() const { return driver_version_; }  // 13000 for CUDA 13.0
  int device_count() const { return device_count_; }
  Result<CudaDeviceInfo> Device(int index) const;

  // Device-to-device copies on `index`'s primary context: two buffers of `bytes`, filled
  // once, then `repeats` timed copies (after one untimed warm-up), each timed by CUDA events
  // recorded around it on the default stream, their GPU times in seconds through `on_copy`.
  // Events, buffers and the context are released on every path.
  Result<bool> TimeDeviceCopies(int index, uint64_t bytes, int repeats,
                                const std::function<void(double seconds)>& on_copy) const;

  struct Api;

 private:
  CudaDriver() = default;
  std::string ErrorText(int code) const;

  std::unique_ptr<Api> api_;
  std::string library_path_;
  int driver_version_ = 0;
  int device_count_ = 0;
};

}  // namespace headroom
