// Implementation notes: moved from cli/export_cmd.cc unchanged (the sampler was a class in
// the command's file); the cli keeps the flags, the signals and the server's lifetime.
#include "export/exporter.h"

#include <fmt/format.h>
#include <unistd.h>

#include <utility>

#include "base/message.h"
#include "base/text.h"
#include "guard/guard_record.h"
#include "sys/machine_arch.h"
#include "sys/meminfo.h"
#include "sys/psi.h"
#include "top/top_json.h"

namespace headroom {

void ExportState::Publish(std::shared_ptr<const ExportRendering> r) {
  std::lock_guard lock(mu_);
  rendered_ = std::move(r);
}

std::shared_ptr<const ExportRendering> ExportState::Latest() const {
  std::lock_guard lock(mu_);
  return rendered_;
}

void ExportState::CountResponse(int status) {
  std::lock_guard lock(mu_);
  ++requests_[status];
}

std::map<int, uint64_t> ExportState::Requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

bool ExportState::WaitStop(std::chrono::microseconds d) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, d, [&] { return stop_; });
}

void ExportState::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
}

// The GPU readings the sampler took, handed to top's collector as its backend: the live page
// reads NVML no more often than /metrics does.
class ExportSampler::Readings final : public GpuBackend {
 public:
  explicit Readings(std::vector<GpuReading> r) : readings_(std::move(r)) {}
  std::string_view backend_name() const override { return "nvml"; }
  unsigned device_count() const override { return static_cast<unsigned>(readings_.size()); }
  GpuReading ReadDevice(unsigned index) override {
    return index < readings_.size() ? readings_[index] : GpuReading{};
  }
  void Set(std::vector<GpuReading> r) {
    if (r.size() == readings_.size()) readings_ = std::move(r);
  }

 private:
  std::vector<GpuReading> readings_;
};

ExportSampler::~ExportSampler() = default;

ExportSampler::ExportSampler(ExportSamplerConfig config, ExportState& state)
    : config_(std::move(config)), state_(state) {
  auto nvml = Nvml::Open(config_.nvml_lib);
  if (nvml)
    nvml_ = std::move(*nvml);
  else
    nvml_error_ = nvml.error().what;
  arch_ = MachineArch(config_.root);
  if (config_.journal) guarded_.emplace(*config_.journal, config_.root, LocalHostName());
}

void ExportSampler::SampleOnce() {
  const auto start = std::chrono::steady_clock::now();
  ExportSnapshot s;
  if (auto m = ReadMemInfo(config_.root)) s.meminfo = *m;
  if (auto p = ReadMemoryPsi(config_.root); p && *p) s.psi = **p;
  if (nvml_) s.gpus = SampleAllDevices(*nvml_);
  s.platform = ApplyPlatformOverride(DetectPlatform(s.gpus), config_.platform);
  const double period = std::chrono::duration<double>(config_.interval).count();
  throttle_.Add(s.gpus, samples_ == 0 ? 0.0 : period);
  s.throttle_seconds = throttle_.seconds();
  for (const auto& g : s.gpus) {
    if (!g.processes) continue;
    for (const auto& p : *g.processes) {
      if (auto comm = config_.root.ReadFile(fmt::format("proc/{}/comm", p.pid), 256)) {
        s.process_names[p.pid] = std::string(TrimBlanks(*comm));
      }
    }
  }
  if (config_.journal) {
    if (!journal_) {
      auto j = Journal::Open(*config_.journal, JournalOptions{.read_only = true});
      if (j) journal_.emplace(std::move(*j));
    }
    if (journal_) {
      if (auto t = journal_->Totals()) {
        s.guard = GuardCounters{
            static_cast<uint64_t>(t->guard_runs),     static_cast<uint64_t>(t->guard_kills),
            static_cast<uint64_t>(t->guard_warnings), static_cast<uint64_t>(t->sweep_trials_killed),
            static_cast<uint64_t>(t->guardian_kills), static_cast<uint64_t>(t->guardian_warnings)};
      } else {
        journal_.reset();  // reopen next time (the file may have been replaced)
      }
    }
  }
  if (guarded_) s.guarded = guarded_->Read();
  s.arch = arch_;
  s.dcgm_names = config_.dcgm_names;
  if (s.dcgm_names) {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0) s.hostname = host;
  }
  s.version = HEADROOM_VERSION;
  s.samples_total = ++samples_;
  s.last_sample_seconds = last_seconds_;
  s.requests_by_code = state_.Requests();
  const auto families = BuildFamilies(s);
  auto r = std::make_shared<ExportRendering>();
  r->prometheus = RenderPrometheus(families);
  r->openmetrics = RenderOpenMetrics(families);
  SampleLive(s);
  r->live_json = live_json_;
  state_.Publish(std::move(r));
  last_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void ExportSampler::SampleLive(const ExportSnapshot& s) {
  const auto now = std::chrono::system_clock::now();
  if (!top_) {
    CollectorOptions options;
    options.journal = config_.journal;
    if (!config_.journal) options.journal_note = "no journal";
    options.host = LocalHostName();
    options.self = ::getpid();
    options.platform_override = config_.platform;
    auto readings = std::make_unique<Readings>(s.gpus);
    readings_ = readings.get();
    std::unique_ptr<GpuBackend> gpu;
    if (nvml_) gpu = std::move(readings);
    top_ = std::make_unique<TopCollector>(config_.root, std::move(gpu),
                                          nvml_error_ ? EnglishText(*nvml_error_) : "",
                                          std::move(options));
    if (!nvml_) readings_ = nullptr;
  } else if (readings_) {
    readings_->Set(s.gpus);
  }
  const TopSnapshot& snap = top_->Refresh(now, std::chrono::steady_clock::now());
  history_.Add(LivePointOf(s, std::chrono::duration<double>(now.time_since_epoch()).count()));
  const auto interval = std::chrono::duration_cast<std::chrono::milliseconds>(config_.interval);
  live_json_ = LiveJsonBody(TopSnapshotJson(snap, interval, LocalHostName()), s.guarded, history_,
                            config_.nodes);
}

void ExportSampler::Run() {
  auto next = std::chrono::steady_clock::now() + config_.interval;
  while (!state_.WaitStop(std::chrono::duration_cast<std::chrono::microseconds>(
      next - std::chrono::steady_clock::now()))) {
    SampleOnce();
    next += config_.interval;
    // Fell behind (a slow NVML call, a suspended machine): start again from now.
    if (next < std::chrono::steady_clock::now())
      next = std::chrono::steady_clock::now() + config_.interval;
  }
}

HttpResponse ExportResponse(const ExportState& state, const HttpRequest& req) {
  if (req.path == "/metrics") {
    const auto r = state.Latest();
    const bool om = req.accept.find("application/openmetrics-text") != std::string::npos;
    return {200, std::string(om ? kOpenMetricsContentType : kPrometheusContentType),
            om ? r->openmetrics : r->prometheus};
  }
  if (req.path == "/") return {200, "text/html; charset=utf-8", std::string(LivePage())};
  if (req.path == "/live.json")
    return {200, "application/json; charset=utf-8", state.Latest()->live_json};
  return {404, "text/plain; charset=utf-8", "not found: try /metrics or /\n"};
}

}  // namespace headroom
