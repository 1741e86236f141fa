// `headroom bandwidth`: host memory copy bandwidth (threads, buffers sized past the caches)
// and, where a GPU and libcuda are present, device-to-device copy bandwidth through the
// CUDA driver API; on GB10 the device figure is compared with the measured 180-192 GB/s.
// Read-only: it copies between its own buffers.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "cli/bandwidth_view.h"
#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "doctor/bandwidth.h"
#include "gpu/cuda_driver.h"
#include "sys/meminfo.h"

namespace headroom {
namespace {

// bandwidth's flags: the app, then the variables its options write.
struct BandwidthCommandFlags final : CommandFlags {
  CLI::App app{Tr("Measure memory copy bandwidth: host memory (memcpy across threads, each "
                  "copying its own slice of two buffers sized past the caches) and, with an "
                  "NVIDIA GPU, device-to-device copies through the CUDA driver API (libcuda.so.1, "
                  "loaded at run time). GB/s with GB = 1e9 bytes, counting bytes read + bytes "
                  "written (as STREAM's Copy and CUDA's bandwidthTest do). On GB10 the device "
                  "figure is compared with the 180-192 GB/s measured in copy tests, not the 273 "
                  "GB/s spec.\n\n"
                  "exit status: 0 measured; 1 a measurement failed (no GPU with --device-only, "
                  "allocation failed); 2 usage error"),
               "headroom bandwidth"};
  std::string size_text = "1GiB", device_size_text = "1GiB", cuda_lib;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int repeats = 10;
  bool json = false, host_only = false, device_only = false;
  CLI::App& App() override { return app; }
};

}  // namespace

std::unique_ptr<CommandFlags> DefineBandwidthFlags() {
  auto defined = std::make_unique<BandwidthCommandFlags>();
  auto& [app, size_text, device_size_text, cuda_lib, threads, repeats, json, host_only,
         device_only] = *defined;
  app.add_option(
      "--size", size_text,
      Tr("host buffer size, two are allocated (default 1GiB; at most 1/8 of MemAvailable each)"));
  app.add_option("--device-size", device_size_text,
                 Tr("device buffer size, two are allocated (default 1GiB)"));
  app.add_option("--threads", threads, Tr("host copy threads (default: the CPUs)"))
      ->check(CLI::Range(1, 1024));
  app.add_option("--repeats", repeats, Tr("timed copies after one warm-up (default 10)"))
      ->check(CLI::Range(1, 10000));
  app.add_flag("--host-only", host_only, Tr("measure host memory only"));
  app.add_flag("--device-only", device_only, Tr("measure the GPU only"));
  AddCudaLibFlag(app, cuda_lib);
  AddJsonFlag(app, json);
  return defined;
}

int RunBandwidthCommand(const CliEnv& env, CommandFlags& given_flags) {
  auto& [app, size_text, device_size_text, cuda_lib, threads, repeats, json, host_only,
         device_only] = FlagsOf<BandwidthCommandFlags>(given_flags);
  try {
    if (host_only && device_only)
      throw UsageError{Tr("--host-only and --device-only exclude each other")};
    const SysRoot root(env.default_root);
    const auto meminfo = ReadMemInfo(root);
    // 0: MemAvailable unknown. A plain integer, not an optional: aarch64 g++ 12 at -O2 warns
    // (maybe-uninitialized) through the optional's storage here.
    uint64_t avail = 0;
    if (meminfo) {
      if (const auto estimated = meminfo->EstimatedAvailable()) avail = estimated->bytes;
    }
    const uint64_t host_bytes = SizeOrPercentFlag(size_text, avail, "--size");
    const uint64_t device_bytes = SizeOrPercentFlag(device_size_text, avail, "--device-size");
    if (host_bytes < (1 << 20)) throw UsageError{Tr("--size: at least 1MiB")};
    if (device_bytes < (1 << 20)) throw UsageError{Tr("--device-size: at least 1MiB")};
    const HostCopySize host = CapHostCopyBytes(host_bytes, avail);
    if (host.lowered && !json && !device_only) PrintHostCopyLowered(env, host.bytes, avail);
    BandwidthOptions o;
    o.host = !device_only;
    o.host_copy = {host.bytes, threads, repeats};
    o.device = !host_only;
    o.cuda_lib = ResolveCudaLibrary(cuda_lib, std::getenv);
    o.device_bytes = device_bytes;
    o.repeats = repeats;
    const BandwidthReport report = MeasureBandwidth(o);
    if (json) {
      std::fprintf(env.out, "%s\n", BandwidthToJson(report).dump(2).c_str());
    } else {
      PrintBandwidthReport(env, report, device_only);
    }
    PrintBandwidthFailures(env, report, device_only);
    return BandwidthFailed(report, device_only) ? kExitNegative : kExitOk;
  } catch (const UsageError& e) {
    PrintError(env, "bandwidth: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
