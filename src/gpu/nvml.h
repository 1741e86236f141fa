// Nvml: the NVIDIA Management Library, loaded at run time (docs/style.md rule 6).
//
// headroom links no NVIDIA library: a machine without the driver, or a container without
// its libraries mounted, must still get memory readings. So Open() dlopen()s
// libnvidia-ml.so.1 (the name a runtime-only install has), resolves each symbol on its own
// (a missing optional one turns one metric off, not the whole backend, unlike btop), and
// calls nvmlInit_v2. A failure to open is a Result error the caller reports once before
// carrying on without GPU data.
//
// The library path is chosen by the caller: the CLI reads `--nvml-lib PATH` or
// HEADROOM_NVML_LIB (ResolveNvmlLibrary, with std::getenv handed in) and passes it down;
// nothing here reads the environment. Open in the process that samples: NVML state does not
// survive fork() (jetson_stats thor_gpu.py).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "gpu/gpu.h"

namespace headroom {

// The soname of a runtime-only driver install (the unversioned .so exists only with the
// development package).
inline constexpr std::string_view kNvmlDefaultLibrary = "libnvidia-ml.so.1";

// The library to load: `flag` (--nvml-lib) if given, else $HEADROOM_NVML_LIB, else empty
// (Open's default, kNvmlDefaultLibrary). `getenv` reads one variable (nullptr when unset);
// the CLI passes std::getenv, tests a table. An empty value counts as unset.
std::string ResolveNvmlLibrary(std::string_view flag,
                               const std::function<const char*(const char*)>& getenv);

// One entry of the symbol table: the name asked for first, the name that resolved (one of
// its fallbacks, or empty when none did) and whether Open() fails without it.
struct NvmlSymbolStatus {
  std::string_view wanted;
  std::string_view resolved;
  bool required = false;
};

class Nvml final : public GpuBackend {
 public:
  // Loads `library_path` (empty: kNvmlDefaultLibrary, found by the dynamic loader's search),
  // resolves the symbol table, calls nvmlInit_v2 and counts devices. Errors read
  //   nvml: dlopen(PATH): <dlerror text>
  //   nvml: dlsym(nvmlInit_v2): <dlerror text>
  //   nvml: nvmlInit_v2(): <nvmlErrorString, lower case> (nvml error N)
  static Result<std::unique_ptr<Nvml>> Open(const std::string& library_path = {});

  // nvmlShutdown (NVML reference-counts init) and dlclose.
  ~Nvml() override;
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  std::string_view backend_name() const override { return "nvml"; }
  unsigned device_count() const override { return device_count_; }
  GpuReading ReadDevice(unsigned index) override;

  const std::string& library_path() const { return library_path_; }
  // Every symbol in the table, for the probe and `doctor`.
  std::vector<NvmlSymbolStatus> Symbols() const;

  struct Api;  // the resolved function pointers (nvml.cc)

 private:
  Nvml() = default;

  void* handle_ = nullptr;    // dlopen handle, closed by the destructor
  bool initialized_ = false;  // nvmlInit_v2 succeeded: the destructor owes a nvmlShutdown
  std::unique_ptr<Api> api_;
  std::string library_path_;
  unsigned device_count_ = 0;
  // System-wide readings, read once at Open() and copied into each device's reading.
  std::optional<std::string> driver_version_;
  std::optional<int> cuda_driver_version_;
};

}  // namespace headroom
