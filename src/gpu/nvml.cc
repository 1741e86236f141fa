// Implementation notes.
//
// The only file that includes <dlfcn.h> for NVML (docs/style.md rule 6). Symbols are looked up
// by their versioned names: the header's macros map nvmlInit to nvmlInit_v2 and so on at
// compile time, so a dlsym by string must ask for the versioned name itself (reference
// section 1.1). Each optional symbol lists its names newest first; the first that resolves
// is used, and a symbol that resolves under none turns its metric into nullopt.
//
// Reading a device is a thin sequence of calls. A call's failure is remembered as pending
// and recorded in GpuReading::unavailable only when no fallback in its chain succeeds, so
// "v2 failed, v1 worked" reads as a value and not as an error. NOT_SUPPORTED, a missing
// symbol and GPU_IS_LOST all leave the field nullopt and the sample goes on; GPU_IS_LOST
// also sets gpu_lost, because it is an event to report, not a missing feature.
//
// No caching of "unsupported" between samples: at 1 Hz the dead calls cost microseconds,
// and a driver that starts answering after a reload is then seen at once.
#include "gpu/nvml.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <initializer_list>
#include <optional>

#include "base/message.h"
#include "gpu/dl_error.h"
#include "gpu/library_file.h"
#include "gpu/nvml_abi.h"

namespace headroom {

// A resolved symbol: the function, and the name it resolved under (or the preferred name
// when it did not resolve, for messages). In a named namespace, not an anonymous one: Nvml::Api,
// a class with linkage, holds it (g++'s -Wsubobject-linkage, in the unity build).
namespace nvml_detail {

template <typename Fn>
struct Sym {
  Fn fn = nullptr;
  std::string_view name;
};

}  // namespace nvml_detail

using nvml_detail::Sym;

struct Nvml::Api {
  // Required: Open() fails without them.
  Sym<nvml_abi::InitFn> init;
  Sym<nvml_abi::ShutdownFn> shutdown;
  Sym<nvml_abi::ErrorStringFn> error_string;
  Sym<nvml_abi::DeviceGetCountFn> get_count;
  Sym<nvml_abi::DeviceGetHandleByIndexFn> get_handle_by_index;
  // Optional.
  Sym<nvml_abi::SystemGetStringFn> driver_version;
  Sym<nvml_abi::SystemGetCudaDriverVersionFn> cuda_driver_version;
  Sym<nvml_abi::DeviceGetStringFn> name;
  Sym<nvml_abi::DeviceGetStringFn> uuid;
  Sym<nvml_abi::DeviceGetComputeCapabilityFn> compute_capability;
  Sym<nvml_abi::DeviceGetTemperatureVFn> temperature_v;
  Sym<nvml_abi::DeviceGetTemperatureFn> temperature;
  Sym<nvml_abi::DeviceGetUintFn> power_usage;
  Sym<nvml_abi::DeviceGetUllFn> total_energy;
  Sym<nvml_abi::DeviceGetUintFn> enforced_power_limit;
  Sym<nvml_abi::DeviceGetClockFn> clock_info;
  Sym<nvml_abi::DeviceGetClockFn> max_clock_info;
  Sym<nvml_abi::DeviceGetUllFn> clock_event_reasons;
  Sym<nvml_abi::DeviceGetUtilizationFn> utilization;
  Sym<nvml_abi::DeviceGetMemoryInfoV2Fn> memory_info_v2;
  Sym<nvml_abi::DeviceGetMemoryInfoFn> memory_info;
  Sym<nvml_abi::DeviceGetProcessesFn> processes;
  Sym<nvml_abi::DeviceGetProcessesV1Fn> processes_v1;
  Sym<nvml_abi::DeviceGetFieldValuesFn> field_values;

  std::vector<NvmlSymbolStatus> table;

  // Looks up `names` in order; the first found fills `sym`. Returns whether one was found.
  // On failure dlerror() still holds the text of the last lookup.
  template <typename Fn>
  bool Resolve(void* handle, Sym<Fn>& sym, std::initializer_list<const char*> names,
               bool required) {
    sym.name = *names.begin();
    for (const char* candidate : names) {
      dlerror();  // clear: a symbol's value may legitimately be NULL only for data
      if (void* address = dlsym(handle, candidate)) {
        // POSIX guarantees a function's address survives the trip through void*.
        sym.fn = reinterpret_cast<Fn>(address);
        sym.name = candidate;
        break;
      }
    }
    table.push_back({*names.begin(), sym.fn != nullptr ? sym.name : std::string_view(), required});
    return sym.fn != nullptr;
  }

  // "<nvmlErrorString in lower case> (nvml error N)". nvmlErrorString works before init.
  std::string ErrorText(nvml_abi::Return code) const {
    std::string text = error_string.fn != nullptr ? error_string.fn(code) : "";
    if (text.empty()) text = "unknown error";
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text + " (nvml error " + std::to_string(code) + ")";
  }
};

namespace {

// Runs the calls of one device reading and keeps the record of what did not come back.
class DeviceReader {
 public:
  DeviceReader(const Nvml::Api& api, GpuReading& reading) : api_(api), reading_(reading) {}

  // One call of a fallback chain: true on SUCCESS. A failure stays pending until Flush().
  template <typename Fn, typename... Args>
  bool Call(const Sym<Fn>& sym, Args... args) {
    if (sym.fn == nullptr) {
      last_code_ = kGpuSymbolMissing;
      pending_ = GpuCallStatus{std::string(sym.name), kGpuSymbolMissing, "symbol not in library"};
      return false;
    }
    last_code_ = sym.fn(args...);
    if (last_code_ == nvml_abi::kSuccess) {
      pending_.reset();
      return true;
    }
    if (last_code_ == nvml_abi::kErrorGpuIsLost) reading_.gpu_lost = true;
    pending_ = GpuCallStatus{std::string(sym.name), last_code_, api_.ErrorText(last_code_)};
    return false;
  }

  // Ends a chain: a failure no fallback repaired goes into reading.unavailable, with the
  // argument that tells calls of one symbol apart ("sm", "74").
  void Flush(std::string_view argument = {}) {
    if (!pending_) return;
    if (!argument.empty()) pending_->call += "(" + std::string(argument) + ")";
    reading_.unavailable.push_back(std::move(*pending_));
    pending_.reset();
  }

  // Records a failure found after a successful call (a field inside a batch).
  void Record(std::string call, int code) {
    if (code == nvml_abi::kErrorGpuIsLost) reading_.gpu_lost = true;
    reading_.unavailable.push_back(GpuCallStatus{std::move(call), code, api_.ErrorText(code)});
  }

  int last_code() const { return last_code_; }

 private:
  const Nvml::Api& api_;
  GpuReading& reading_;
  std::optional<GpuCallStatus> pending_;
  int last_code_ = nvml_abi::kSuccess;
};

// A string from a fixed buffer the driver fills; NUL-terminated even if the driver is not.
std::optional<std::string> ReadString(DeviceReader& reader,
                                      const Sym<nvml_abi::DeviceGetStringFn>& sym,
                                      nvml_abi::Device device, unsigned size) {
  std::vector<char> buffer(size, '\0');
  std::optional<std::string> out;
  if (reader.Call(sym, device, buffer.data(), size)) {
    out = std::string(buffer.data(), strnlen(buffer.data(), size));
  }
  reader.Flush();
  return out;
}

GpuProcess ToProcess(unsigned pid, unsigned long long used) {
  GpuProcess p;
  p.pid = pid;
  if (used != nvml_abi::kValueNotAvailable) p.used_bytes = used;
  return p;
}

// The two-call protocol of the process lists: ask with count 0 for the size
// (INSUFFICIENT_SIZE with the count, or SUCCESS when none run), then read. The list is racy,
// so the buffer has room for 8 more, and a second INSUFFICIENT_SIZE starts over (3 times).
// The count is capped so a corrupt answer cannot ask for gigabytes (65536 x 24 B = 1.5 MiB).
template <typename Info, typename Fn>
std::optional<std::vector<GpuProcess>> ReadProcessList(DeviceReader& reader, const Sym<Fn>& sym,
                                                       nvml_abi::Device device) {
  constexpr int kAttempts = 3;
  constexpr unsigned kSlack = 8;
  constexpr unsigned kMaxProcesses = 65536;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    unsigned count = 0;
    if (reader.Call(sym, device, &count, static_cast<Info*>(nullptr))) {
      return std::vector<GpuProcess>{};
    }
    if (reader.last_code() != nvml_abi::kErrorInsufficientSize) return std::nullopt;
    std::vector<Info> infos(std::min(count, kMaxProcesses) + kSlack);
    unsigned filled = static_cast<unsigned>(infos.size());
    if (reader.Call(sym, device, &filled, infos.data())) {
      std::vector<GpuProcess> out;
      for (unsigned i = 0; i < std::min<size_t>(filled, infos.size()); ++i) {
        out.push_back(ToProcess(infos[i].pid, infos[i].used_gpu_memory));
      }
      return out;
    }
    if (reader.last_code() != nvml_abi::kErrorInsufficientSize) return std::nullopt;
  }
  return std::nullopt;
}

// An unsigned field value of any width, or nullopt for another type.
std::optional<uint64_t> UnsignedFieldValue(const nvml_abi::FieldValue& v) {
  switch (v.value_type) {
    case nvml_abi::kValueTypeUnsignedInt:
      return v.value.ui_val;
    case nvml_abi::kValueTypeUnsignedLong:
      return v.value.ul_val;
    case nvml_abi::kValueTypeUnsignedLongLong:
      return v.value.ull_val;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::string ResolveNvmlLibrary(std::string_view flag,
                               const std::function<const char*(const char*)>& getenv) {
  if (!flag.empty()) return std::string(flag);
  const char* env = getenv("HEADROOM_NVML_LIB");
  return env != nullptr ? std::string(env) : std::string();
}

Result<std::unique_ptr<Nvml>> Nvml::Open(const std::string& library_path) {
  const std::string path = library_path.empty() ? std::string(kNvmlDefaultLibrary) : library_path;
  // A FIFO would hang dlopen and a truncated file kill it with SIGBUS: checked first.
  if (auto wrong = CheckLibraryFile(path))
    return Error{Msg("nvml: dlopen({0}): {1}", path, *wrong)};
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  // TRANSLATORS: {0} is the library's path, {1} dlerror()'s text; a translation may say
  // that the call failed, which the English leaves to the form "call(argument): reason".
  if (handle == nullptr) return Error{Msg("nvml: dlopen({0}): {1}", path, DlErrorText())};

  std::unique_ptr<Nvml> nvml(new Nvml());
  nvml->handle_ = handle;  // from here on the destructor closes it on every error path
  nvml->library_path_ = path;
  nvml->api_ = std::make_unique<Api>();
  Api& api = *nvml->api_;

  // Required: without these there is no device to read. Each is checked at once so the
  // message carries that lookup's dlerror() text.
  auto missing = [](const char* name) {
    return Error{Msg("nvml: dlsym({0}): {1}", name, DlErrorText())};
  };
  if (!api.Resolve(handle, api.init, {"nvmlInit_v2"}, true)) return missing("nvmlInit_v2");
  if (!api.Resolve(handle, api.shutdown, {"nvmlShutdown"}, true)) return missing("nvmlShutdown");
  if (!api.Resolve(handle, api.error_string, {"nvmlErrorString"}, true)) {
    return missing("nvmlErrorString");
  }
  if (!api.Resolve(handle, api.get_count, {"nvmlDeviceGetCount_v2"}, true)) {
    return missing("nvmlDeviceGetCount_v2");
  }
  if (!api.Resolve(handle, api.get_handle_by_index, {"nvmlDeviceGetHandleByIndex_v2"}, true)) {
    return missing("nvmlDeviceGetHandleByIndex_v2");
  }

  // Optional, newest name first. Fallbacks are listed only where the older symbol has the
  // same signature (reference sections 1.1-1.4); where it does not (temperature, memory,
  // process lists) the older one has its own slot.
  api.Resolve(handle, api.driver_version, {"nvmlSystemGetDriverVersion"}, false);
  api.Resolve(handle, api.cuda_driver_version,
              {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"}, false);
  api.Resolve(handle, api.name, {"nvmlDeviceGetName"}, false);
  api.Resolve(handle, api.uuid, {"nvmlDeviceGetUUID"}, false);
  api.Resolve(handle, api.compute_capability, {"nvmlDeviceGetCudaComputeCapability"}, false);
  // TemperatureV appeared with NVML 12.8; the older call is deprecated in 13 but still
  // exported by the 580 driver.
  api.Resolve(handle, api.temperature_v, {"nvmlDeviceGetTemperatureV"}, false);
  api.Resolve(handle, api.temperature, {"nvmlDeviceGetTemperature"}, false);
  api.Resolve(handle, api.power_usage, {"nvmlDeviceGetPowerUsage"}, false);
  api.Resolve(handle, api.total_energy, {"nvmlDeviceGetTotalEnergyConsumption"}, false);
  api.Resolve(handle, api.enforced_power_limit, {"nvmlDeviceGetEnforcedPowerLimit"}, false);
  api.Resolve(handle, api.clock_info, {"nvmlDeviceGetClockInfo"}, false);
  api.Resolve(handle, api.max_clock_info, {"nvmlDeviceGetMaxClockInfo"}, false);
  // ...EventReasons from NVML 12.2; ...ThrottleReasons before it, same bits and signature.
  api.Resolve(
      handle, api.clock_event_reasons,
      {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"},
      false);
  api.Resolve(handle, api.utilization, {"nvmlDeviceGetUtilizationRates"}, false);
  api.Resolve(handle, api.memory_info_v2, {"nvmlDeviceGetMemoryInfo_v2"}, false);
  api.Resolve(handle, api.memory_info, {"nvmlDeviceGetMemoryInfo"}, false);
  // _v3 and _v2 take the 24-byte nvmlProcessInfo_t; the unversioned one the 16-byte v1.
  api.Resolve(
      handle, api.processes,
      {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"},
      false);
  api.Resolve(handle, api.processes_v1, {"nvmlDeviceGetComputeRunningProcesses"}, false);
  api.Resolve(handle, api.field_values, {"nvmlDeviceGetFieldValues"}, false);

  if (const nvml_abi::Return code = api.init.fn(); code != nvml_abi::kSuccess) {
    return Error{Msg("nvml: nvmlInit_v2(): {}", api.ErrorText(code))};
  }
  nvml->initialized_ = true;

  unsigned count = 0;
  if (const nvml_abi::Return code = api.get_count.fn(&count); code != nvml_abi::kSuccess) {
    return Error{Msg("nvml: nvmlDeviceGetCount_v2(): {}", api.ErrorText(code))};
  }
  nvml->device_count_ = count;

  if (api.driver_version.fn != nullptr) {
    char buffer[nvml_abi::kDriverVersionBufferSize] = {};
    if (api.driver_version.fn(buffer, sizeof buffer) == nvml_abi::kSuccess) {
      nvml->driver_version_ = std::string(buffer, strnlen(buffer, sizeof buffer));
    }
  }
  if (api.cuda_driver_version.fn != nullptr) {
    int version = 0;
    if (api.cuda_driver_version.fn(&version) == nvml_abi::kSuccess) {
      nvml->cuda_driver_version_ = version;
    }
  }
  return nvml;
}

Nvml::~Nvml() {
  if (initialized_) api_->shutdown.fn();
  if (handle_ != nullptr) dlclose(handle_);
}

std::vector<NvmlSymbolStatus> Nvml::Symbols() const { return api_->table; }

GpuReading Nvml::ReadDevice(unsigned index) {
  const Api& api = *api_;
  GpuReading r;
  r.index = index;
  r.driver_version = driver_version_;
  r.cuda_driver_version = cuda_driver_version_;
  DeviceReader reader(api, r);

  // The handle is asked for on every sample: cheap, and the fake library counts samples by
  // it (tests/fakes/fake_nvml.cc).
  nvml_abi::Device device = nullptr;
  if (!reader.Call(api.get_handle_by_index, index, &device)) {
    reader.Flush(std::to_string(index));
    return r;
  }

  r.name = ReadString(reader, api.name, device, nvml_abi::kDeviceNameBufferSize);
  r.uuid = ReadString(reader, api.uuid, device, nvml_abi::kDeviceUuidBufferSize);

  int major = 0, minor = 0;
  if (reader.Call(api.compute_capability, device, &major, &minor)) {
    r.compute_capability_major = major;
    r.compute_capability_minor = minor;
  }
  reader.Flush();

  nvml_abi::TemperatureV1 temperature_v{nvml_abi::kTemperatureV1Version, nvml_abi::kTemperatureGpu,
                                        0};
  unsigned temperature = 0;
  if (reader.Call(api.temperature_v, device, &temperature_v)) {
    r.temperature_c = temperature_v.temperature;
  } else if (reader.Call(api.temperature, device, nvml_abi::kTemperatureGpu, &temperature)) {
    r.temperature_c = static_cast<int>(temperature);
  }
  reader.Flush();

  unsigned milliwatts = 0;
  if (reader.Call(api.power_usage, device, &milliwatts)) r.power_mw = milliwatts;
  reader.Flush();
  unsigned long long millijoules = 0;
  if (reader.Call(api.total_energy, device, &millijoules)) r.energy_mj = millijoules;
  reader.Flush();
  if (reader.Call(api.enforced_power_limit, device, &milliwatts)) {
    r.enforced_power_limit_mw = milliwatts;
  }
  reader.Flush();

  unsigned mhz = 0;
  if (reader.Call(api.clock_info, device, nvml_abi::kClockSm, &mhz)) r.sm_clock_mhz = mhz;
  reader.Flush("sm");
  if (reader.Call(api.clock_info, device, nvml_abi::kClockMem, &mhz)) r.mem_clock_mhz = mhz;
  reader.Flush("mem");
  if (reader.Call(api.max_clock_info, device, nvml_abi::kClockSm, &mhz)) r.max_sm_clock_mhz = mhz;
  reader.Flush("sm");

  unsigned long long reasons = 0;
  if (reader.Call(api.clock_event_reasons, device, &reasons)) r.clock_event_reasons = reasons;
  reader.Flush();

  // One batch for the cumulative counters; each entry has its own return code.
  nvml_abi::FieldValue fields[2] = {};
  fields[0].field_id = nvml_abi::kFieldSwPowerCapNs;
  fields[1].field_id = nvml_abi::kFieldSyncBoostNs;
  if (reader.Call(api.field_values, device, 2, fields)) {
    std::optional<uint64_t>* targets[2] = {&r.sw_power_cap_ns, &r.sync_boost_ns};
    for (int i = 0; i < 2; ++i) {
      if (fields[i].nvml_return == nvml_abi::kSuccess) {
        *targets[i] = UnsignedFieldValue(fields[i]);
      } else {
        reader.Record("nvmlDeviceGetFieldValues(" + std::to_string(fields[i].field_id) + ")",
                      fields[i].nvml_return);
      }
    }
  }
  reader.Flush();

  nvml_abi::Utilization utilization{};
  if (reader.Call(api.utilization, device, &utilization)) {
    r.gpu_utilization_pct = utilization.gpu;
    r.memory_utilization_pct = utilization.memory;
  }
  reader.Flush();

  // v2 adds `reserved`; both answer NOT_SUPPORTED on integrated GPUs (GB10, Jetson).
  nvml_abi::MemoryV2 memory_v2{};
  memory_v2.version = nvml_abi::kMemoryV2Version;
  nvml_abi::Memory memory{};
  if (reader.Call(api.memory_info_v2, device, &memory_v2)) {
    r.memory_total_bytes = memory_v2.total;
    r.memory_reserved_bytes = memory_v2.reserved;
    r.memory_free_bytes = memory_v2.free;
    r.memory_used_bytes = memory_v2.used;
  } else if (reader.Call(api.memory_info, device, &memory)) {
    r.memory_total_bytes = memory.total;
    r.memory_free_bytes = memory.free;
    r.memory_used_bytes = memory.used;
  }
  reader.Flush();

  // When the v2/v3 lists fail for any reason but a lost GPU, the legacy list may still work.
  r.processes = ReadProcessList<nvml_abi::ProcessInfo>(reader, api.processes, device);
  if (!r.processes && api.processes_v1.fn != nullptr &&
      reader.last_code() != nvml_abi::kErrorGpuIsLost) {
    r.processes = ReadProcessList<nvml_abi::ProcessInfoV1>(reader, api.processes_v1, device);
  }
  reader.Flush();
  return r;
}

}  // namespace headroom
