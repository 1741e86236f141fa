#include "gpu/cuda_driver.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include "base/message.h"
#include "gpu/cuda_abi.h"
#include "gpu/dl_error.h"
#include "gpu/library_file.h"

namespace headroom {

struct CudaDriver::Api {
  cuda_abi::InitFn init = nullptr;
  cuda_abi::DriverGetVersionFn driver_get_version = nullptr;
  cuda_abi::DeviceGetCountFn device_get_count = nullptr;
  cuda_abi::DeviceGetFn device_get = nullptr;
  cuda_abi::DeviceGetNameFn device_get_name = nullptr;
  cuda_abi::DeviceGetAttributeFn device_get_attribute = nullptr;
  cuda_abi::PrimaryCtxRetainFn primary_ctx_retain = nullptr;
  cuda_abi::PrimaryCtxReleaseFn primary_ctx_release = nullptr;
  cuda_abi::CtxSetCurrentFn ctx_set_current = nullptr;
  cuda_abi::CtxSynchronizeFn ctx_synchronize = nullptr;
  cuda_abi::MemAllocFn mem_alloc = nullptr;
  cuda_abi::MemFreeFn mem_free = nullptr;
  cuda_abi::MemcpyDtoDFn memcpy_dtod = nullptr;
  cuda_abi::MemsetD8Fn memset_d8 = nullptr;
  cuda_abi::GetErrorStringFn get_error_string = nullptr;
  cuda_abi::EventCreateFn event_create = nullptr;
  cuda_abi::EventRecordFn event_record = nullptr;
  cuda_abi::EventSynchronizeFn event_synchronize = nullptr;
  cuda_abi::EventElapsedTimeFn event_elapsed = nullptr;
  cuda_abi::EventDestroyFn event_destroy = nullptr;
};

namespace {

template <typename Fn>
bool Resolve(void* handle, Fn& fn, const char* name) {
  dlerror();
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  return fn != nullptr;
}

}  // namespace

std::string ResolveCudaLibrary(std::string_view flag,
                               const std::function<const char*(const char*)>& getenv) {
  if (!flag.empty()) return std::string(flag);
  const char* env = getenv("HEADROOM_CUDA_LIB");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string();
}

std::string CudaDriver::ErrorText(int code) const {
  const char* text = nullptr;
  if (api_->get_error_string(code, &text) != cuda_abi::kSuccess || text == nullptr)
    text = "unknown error";
  return fmt::format("{} (cuda error {})", text, code);
}

Result<std::unique_ptr<CudaDriver>> CudaDriver::Open(const std::string& library_path) {
  const std::string path = library_path.empty() ? std::string(kCudaDefaultLibrary) : library_path;
  // A FIFO would hang dlopen and a truncated file kill it with SIGBUS: checked first.
  if (auto wrong = CheckLibraryFile(path))
    return Error{Msg("cuda: dlopen({0}): {1}", path, *wrong)};
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return Error{Msg("cuda: dlopen({0}): {1}", path, DlErrorText())};
  std::unique_ptr<CudaDriver> cuda(new CudaDriver());
  cuda->library_path_ = path;
  cuda->api_ = std::make_unique<Api>();
  Api& api = *cuda->api_;
  struct Entry {
    const char* name;
    bool ok;
  };
  const Entry entries[] = {
      {"cuInit", Resolve(handle, api.init, "cuInit")},
      {"cuDriverGetVersion", Resolve(handle, api.driver_get_version, "cuDriverGetVersion")},
      {"cuDeviceGetCount", Resolve(handle, api.device_get_count, "cuDeviceGetCount")},
      {"cuDeviceGet", Resolve(handle, api.device_get, "cuDeviceGet")},
      {"cuDeviceGetName", Resolve(handle, api.device_get_name, "cuDeviceGetName")},
      {"cuDeviceGetAttribute", Resolve(handle, api.device_get_attribute, "cuDeviceGetAttribute")},
      {"cuDevicePrimaryCtxRetain",
       Resolve(handle, api.primary_ctx_retain, "cuDevicePrimaryCtxRetain")},
      {"cuDevicePrimaryCtxRelease_v2",
       Resolve(handle, api.primary_ctx_release, "cuDevicePrimaryCtxRelease_v2")},
      {"cuCtxSetCurrent", Resolve(handle, api.ctx_set_current, "cuCtxSetCurrent")},
      {"cuCtxSynchronize", Resolve(handle, api.ctx_synchronize, "cuCtxSynchronize")},
      {"cuMemAlloc_v2", Resolve(handle, api.mem_alloc, "cuMemAlloc_v2")},
      {"cuMemFree_v2", Resolve(handle, api.mem_free, "cuMemFree_v2")},
      {"cuMemcpyDtoD_v2", Resolve(handle, api.memcpy_dtod, "cuMemcpyDtoD_v2")},
      {"cuMemsetD8_v2", Resolve(handle, api.memset_d8, "cuMemsetD8_v2")},
      {"cuGetErrorString", Resolve(handle, api.get_error_string, "cuGetErrorString")},
      {"cuEventCreate", Resolve(handle, api.event_create, "cuEventCreate")},
      {"cuEventRecord", Resolve(handle, api.event_record, "cuEventRecord")},
      {"cuEventSynchronize", Resolve(handle, api.event_synchronize, "cuEventSynchronize")},
      // CUDA 13's name first; drivers before it export only the unversioned one (same signature).
      {"cuEventElapsedTime_v2", Resolve(handle, api.event_elapsed, "cuEventElapsedTime_v2") ||
                                    Resolve(handle, api.event_elapsed, "cuEventElapsedTime")},
      {"cuEventDestroy_v2", Resolve(handle, api.event_destroy, "cuEventDestroy_v2")},
  };
  for (const auto& e : entries) {
    if (!e.ok) return Error{Msg("cuda: dlsym({0}): {1}", e.name, DlErrorText())};
  }
  if (const int r = api.init(0); r != cuda_abi::kSuccess) {
    return Error{Msg("cuda: cuInit(): {}", cuda->ErrorText(r))};
  }
  if (const int r = api.driver_get_version(&cuda->driver_version_); r != cuda_abi::kSuccess) {
    return Error{"cuda: cuDriverGetVersion(): " + cuda->ErrorText(r)};
  }
  if (const int r = api.device_get_count(&cuda->device_count_); r != cuda_abi::kSuccess) {
    return Error{"cuda: cuDeviceGetCount(): " + cuda->ErrorText(r)};
  }
  return cuda;
}

// No dlclose: after cuInit the driver runs threads of its own that would be left without
// their code. The library stays mapped until the process exits, as every CUDA program's does.
CudaDriver::~CudaDriver() = default;

Result<CudaDeviceInfo> CudaDriver::Device(int index) const {
  CudaDeviceInfo info;
  info.index = index;
  cuda_abi::Device dev = 0;
  if (const int r = api_->device_get(&dev, index); r != cuda_abi::kSuccess) {
    return Error{fmt::format("cuda: cuDeviceGet({}): {}", index, ErrorText(r))};
  }
  char name[256] = {};
  if (const int r = api_->device_get_name(name, sizeof name - 1, dev); r != cuda_abi::kSuccess) {
    return Error{fmt::format("cuda: cuDeviceGetName({}): {}", index, ErrorText(r))};
  }
  info.name = name;
  if (const int r = api_->device_get_attribute(&info.cc_major,
                                               cuda_abi::kAttributeComputeCapabilityMajor, dev);
      r != cuda_abi::kSuccess) {
    return Error{
        fmt::format("cuda: cuDeviceGetAttribute(compute capability major): {}", ErrorText(r))};
  }
  if (const int r = api_->device_get_attribute(&info.cc_minor,
                                               cuda_abi::kAttributeComputeCapabilityMinor, dev);
      r != cuda_abi::kSuccess) {
    return Error{
        fmt::format("cuda: cuDeviceGetAttribute(compute capability minor): {}", ErrorText(r))};
  }
  return info;
}

Result<bool> CudaDriver::TimeDeviceCopies(
    int index, uint64_t bytes, int repeats,
    const std::function<void(double seconds)>& on_copy) const {
  cuda_abi::Device dev = 0;
  if (const int r = api_->device_get(&dev, index); r != cuda_abi::kSuccess) {
    return Error{fmt::format("cuda: cuDeviceGet({}): {}", index, ErrorText(r))};
  }
  cuda_abi::Context ctx = nullptr;
  if (const int r = api_->primary_ctx_retain(&ctx, dev); r != cuda_abi::kSuccess) {
    return Error{fmt::format("cuda: cuDevicePrimaryCtxRetain({}): {}", index, ErrorText(r))};
  }
  cuda_abi::DevicePtr src = 0, dst = 0;
  cuda_abi::Event start = nullptr, stop = nullptr;
  // One exit for every path below: destroy, free, release.
  auto finish = [&](Result<bool> result) -> Result<bool> {
    if (stop != nullptr) api_->event_destroy(stop);
    if (start != nullptr) api_->event_destroy(start);
    if (dst != 0) api_->mem_free(dst);
    if (src != 0) api_->mem_free(src);
    api_->ctx_set_current(nullptr);
    api_->primary_ctx_release(dev);
    return result;
  };
  auto fail = [&](const char* call, int r) {
    return finish(Error{fmt::format("cuda: {}: {}", call, ErrorText(r))});
  };
  if (const int r = api_->ctx_set_current(ctx); r != cuda_abi::kSuccess)
    return fail("cuCtxSetCurrent()", r);
  const size_t n = static_cast<size_t>(bytes);
  if (const int r = api_->mem_alloc(&src, n); r != cuda_abi::kSuccess) {
    src = 0;
    return fail("cuMemAlloc_v2()", r);
  }
  if (const int r = api_->mem_alloc(&dst, n); r != cuda_abi::kSuccess) {
    dst = 0;
    return fail("cuMemAlloc_v2()", r);
  }
  if (const int r = api_->event_create(&start, 0); r != cuda_abi::kSuccess) {
    start = nullptr;
    return fail("cuEventCreate()", r);
  }
  if (const int r = api_->event_create(&stop, 0); r != cuda_abi::kSuccess) {
    stop = nullptr;
    return fail("cuEventCreate()", r);
  }
  // Touch both buffers so the timed copies do not pay for first-use page mapping.
  if (const int r = api_->memset_d8(src, 0x5a, n); r != cuda_abi::kSuccess)
    return fail("cuMemsetD8_v2()", r);
  if (const int r = api_->memset_d8(dst, 0, n); r != cuda_abi::kSuccess)
    return fail("cuMemsetD8_v2()", r);
  if (const int r = api_->ctx_synchronize(); r != cuda_abi::kSuccess)
    return fail("cuCtxSynchronize()", r);
  // Each copy is timed on the GPU by events on the default stream around it (as CUDA's
  // bandwidthTest does): the host's scheduling does not enter the figure.
  for (int i = -1; i < repeats; ++i) {  // i = -1: the warm-up
    if (const int r = api_->event_record(start, nullptr); r != cuda_abi::kSuccess)
      return fail("cuEventRecord()", r);
    if (const int r = api_->memcpy_dtod(dst, src, n); r != cuda_abi::kSuccess)
      return fail("cuMemcpyDtoD_v2()", r);
    if (const int r = api_->event_record(stop, nullptr); r != cuda_abi::kSuccess)
      return fail("cuEventRecord()", r);
    if (const int r = api_->event_synchronize(stop); r != cuda_abi::kSuccess)
      return fail("cuEventSynchronize()", r);
    float ms = 0;
    if (const int r = api_->event_elapsed(&ms, start, stop); r != cuda_abi::kSuccess)
      return fail("cuEventElapsedTime()", r);
    if (i >= 0) on_copy(static_cast<double>(ms) / 1e3);
  }
  return finish(true);
}

}  // namespace headroom
