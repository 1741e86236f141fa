// `headroom export`'s moving parts below the CLI: the sampler that turns one reading of the
// machine (meminfo, PSI, NVML, the journal's guard counters) into both text formats every
// interval, the state it shares with the HTTP server's thread, and the server's answers.
//
//   ExportSampler::Run (its thread)  -- Publish -->  ExportState  <-- Latest --  ExportResponse
//                                                    (one mutex)                 (the server)
//
// Metric names, HELP text and label values are data for Prometheus: the caller runs the
// sampler's thread untranslated (the NVML error it keeps is for the terminal, in the user's
// language). Read-only: the journal is opened read-only and reopened when it goes bad.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/message.h"
#include "export/guarded_jobs.h"
#include "export/http.h"
#include "export/live.h"
#include "export/metrics.h"
#include "gpu/nvml.h"
#include "gpu/platform.h"
#include "store/journal.h"
#include "sys/sysroot.h"
#include "top/collector.h"

namespace headroom {

// The last rendering, in both formats.
struct ExportRendering {
  std::string prometheus;
  std::string openmetrics;
  std::string live_json;  // /live.json (export/live.h)
};

// Shared by the sampler's thread and the server's: the last rendering, the count of
// responses by status, and the stop request.
class ExportState {
 public:
  void Publish(std::shared_ptr<const ExportRendering> r);
  std::shared_ptr<const ExportRendering> Latest() const;
  void CountResponse(int status);
  std::map<int, uint64_t> Requests() const;
  // Waits up to `d`; true when asked to stop.
  bool WaitStop(std::chrono::microseconds d);
  void Stop();

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::shared_ptr<const ExportRendering> rendered_;
  std::map<int, uint64_t> requests_;
};

struct ExportSamplerConfig {
  SysRoot root;
  std::string nvml_lib{};                          // the library to load ("" = the default)
  std::optional<std::filesystem::path> journal{};  // nullopt: no guard counters
  std::chrono::microseconds interval{1'000'000};
  PlatformOverride platform{};       // config.toml [platform]
  bool dcgm_names = true;            // also the dcgm-exporter names (export/metrics.h)
  const LiveNodes* nodes = nullptr;  // --node: other machines for the live page, or none
};

class ExportSampler {
 public:
  // Opens NVML; without it the GPU families are left out and nvml_error() says why.
  ExportSampler(ExportSamplerConfig config, ExportState& state);
  ~ExportSampler();
  ExportSampler(const ExportSampler&) = delete;
  ExportSampler& operator=(const ExportSampler&) = delete;
  const std::optional<Message>& nvml_error() const { return nvml_error_; }

  // One reading, rendered and published.
  void SampleOnce();
  // A reading every interval until the state is asked to stop; the first after one interval
  // (the caller samples once before serving). Behind schedule, it starts again from now.
  void Run();

 private:
  ExportSamplerConfig config_;
  ExportState& state_;
  std::unique_ptr<Nvml> nvml_;
  std::optional<Message> nvml_error_;
  std::optional<Journal> journal_;
  std::optional<GuardedJobReader> guarded_;  // with a journal
  ThrottleAccumulator throttle_;
  // The live page's parts: top's collector over this sampler's own GPU readings (made at the
  // first sample, when the devices are known), and the bounded history.
  class Readings;
  Readings* readings_ = nullptr;  // owned by top_
  std::unique_ptr<TopCollector> top_;
  LiveHistory history_;
  std::string live_json_;
  void SampleLive(const ExportSnapshot& s);
  std::string arch_;
  uint64_t samples_ = 0;
  double last_seconds_ = 0;
};

// The answer to `req`: /metrics (OpenMetrics when the Accept header asks for it, else the
// Prometheus text format), / (the live page), /live.json (its data), else 404. Needs a
// published rendering.
HttpResponse ExportResponse(const ExportState& state, const HttpRequest& req);

}  // namespace headroom
