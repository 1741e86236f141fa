// `headroom bandwidth`: host memory copy bandwidth (threads, buffers sized past the caches)
// and, where a GPU and libcuda are present, device-to-device copy bandwidth through the
// CUDA driver API; on GB10 the device figure is compared with the measured 180-192 GB/s.
// Read-only: it copies between its own buffers.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "base/bytes.h"
#include "base/i18n.h"
#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/message_text.h"
#include "doctor/bandwidth.h"
#include "gpu/cuda_driver.h"
#include "sys/meminfo.h"

namespace headroom {
namespace {

nlohmann::ordered_json CopyJson(const CopyMeasurement& m) {
  const std::string what = EnglishText(m.what);
  return {{"what", what},
          {"bytes", m.bytes},
          {"threads", m.threads},
          {"seconds", m.seconds},
          {"median_gbps", m.median_gbps},
          {"best_gbps", m.best_gbps},
          {"worst_gbps", m.worst_gbps}};
}

// The device figure against GB10's measured range: shown, and --json's "gb10_band" (English
// there: --json loads no messages).
std::string Gb10Line(const CopyMeasurement& m) {
  switch (CompareWithGb10(m.median_gbps)) {
    case Gb10Band::kBelow:
      return TrFormat(
          "below GB10's measured {:.0f}-{:.0f} GB/s (the {:.0f} GB/s spec is not reached by "
          "copies)",
          kGb10MeasuredLowGbps, kGb10MeasuredHighGbps, kGb10SpecGbps);
    case Gb10Band::kWithin:
      return TrFormat(
          "within GB10's measured {:.0f}-{:.0f} GB/s (the {:.0f} GB/s spec is not reached by "
          "copies)",
          kGb10MeasuredLowGbps, kGb10MeasuredHighGbps, kGb10SpecGbps);
    case Gb10Band::kAbove:
      return TrFormat(
          "above GB10's measured {:.0f}-{:.0f} GB/s (the {:.0f} GB/s spec is not reached by "
          "copies)",
          kGb10MeasuredLowGbps, kGb10MeasuredHighGbps, kGb10SpecGbps);
  }
  return "";
}

// bandwidth's flags: the app, then the variables its options write.
struct BandwidthCommandFlags final : CommandFlags {
  CLI::App app{Tr("Measure memory copy bandwidth: host memory (memcpy across threads, each copying "
                  "its own slice of two "
                  "buffers sized past the caches) and, with an NVIDIA GPU, device-to-device copies "
                  "through the CUDA driver "
                  "API (libcuda.so.1, loaded at run time). GB/s with GB = 1e9 bytes, counting "
                  "bytes read + bytes written "
                  "(as STREAM's Copy and CUDA's bandwidthTest do). On GB10 the device figure is "
                  "compared with the 180-192 "
                  "GB/s measured in copy tests, not the 273 GB/s spec.\n\n"
                  "exit status: 0 measured; 1 a measurement failed (no GPU with --device-only, "
                  "allocation failed); "
                  "2 usage error"),
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
    uint64_t host_bytes = SizeOrPercentFlag(size_text, avail, "--size");
    const uint64_t device_bytes = SizeOrPercentFlag(device_size_text, avail, "--device-size");
    if (host_bytes < (1 << 20)) throw UsageError{Tr("--size: at least 1MiB")};
    if (device_bytes < (1 << 20)) throw UsageError{Tr("--device-size: at least 1MiB")};
    std::string host_note;
    if (avail > 0 && host_bytes > avail / 8) {
      host_bytes = avail / 8;
      host_note = TrFormat("--size lowered to {} (1/8 of MemAvailable {})", FormatGiB(host_bytes),
                           FormatGiB(avail));
    }
    bool failed = false;
    nlohmann::ordered_json out = {{"schema_version", 1},
                                  {"unit", "GB/s, GB = 1e9 bytes, bytes read + bytes written"}};
    if (!device_only) {
      if (!host_note.empty() && !json) std::fprintf(env.out, "%s\n", host_note.c_str());
      auto host = MeasureHostCopy({host_bytes, threads, repeats});
      if (host) {
        out["host"] = CopyJson(*host);
        if (!json) {
          std::fprintf(env.out, "%s\n",
                       TrFormat("host copy, {}: {}", TranslatedText(host->what),
                                TranslatedText(DescribeCopy(*host)))
                           .c_str());
        }
      } else {
        failed = true;
        out["host"] = {{"error", host.error().message}};
        PrintError(env, "bandwidth: " + host.error().message);
      }
    }
    if (!host_only) {
      auto cuda = CudaDriver::Open(ResolveCudaLibrary(cuda_lib, std::getenv));
      std::string error;
      if (!cuda) {
        error = cuda.error().message;
      } else if ((*cuda)->device_count() == 0) {
        error = Tr("cuda: no device");
      } else {
        out["device"] = nlohmann::ordered_json::array();
        for (int i = 0; i < (*cuda)->device_count(); ++i) {
          auto m = MeasureDeviceCopy(**cuda, i, device_bytes, repeats);
          if (!m) {
            failed = true;
            out["device"].push_back({{"index", i}, {"error", m.error().message}});
            PrintError(env, "bandwidth: " + m.error().message);
            continue;
          }
          auto j = CopyJson(*m);
          j["index"] = i;
          const auto info = (*cuda)->Device(i);
          const bool gb10 = info && info->name.find("GB10") != std::string::npos;
          j["gb10_band"] =
              gb10 ? nlohmann::ordered_json(Gb10Line(*m)) : nlohmann::ordered_json(nullptr);
          out["device"].push_back(j);
          if (!json) {
            std::fprintf(env.out, "%s\n",
                         TrFormat("device copy, {}: {}", TranslatedText(m->what),
                                  TranslatedText(DescribeCopy(*m)))
                             .c_str());
            if (gb10) std::fprintf(env.out, "  %s\n", Gb10Line(*m).c_str());
          }
        }
      }
      if (!error.empty()) {
        out["device_error"] = error;
        if (device_only) {
          failed = true;
          PrintError(env, "bandwidth: " + error);
        } else if (!json) {
          std::fprintf(env.out, "%s\n", TrFormat("device copy: not measured ({})", error).c_str());
        }
      }
    }
    if (json)
      std::fprintf(env.out, "%s\n", out.dump(2).c_str());
    else
      std::fprintf(env.out, "%s\n",
                   Tr("GB/s: GB = 1e9 bytes, counting bytes read + bytes written"));
    return failed ? kExitNegative : kExitOk;
  } catch (const UsageError& e) {
    PrintError(env, "bandwidth: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
