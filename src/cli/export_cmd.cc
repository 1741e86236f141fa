// `headroom export`: a sampler thread (meminfo, PSI, NVML, the journal's guard counters ->
// metric families -> both text formats, every --interval) and an HTTP server on the main
// thread that serves the last rendering. SIGTERM, SIGINT or SIGHUP (a signalfd in the
// server's poll set) stop both; exit 0.
//
// Read-only: no endpoint changes anything, the journal is opened read-only.
#include <fmt/format.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/duration.h"
#include "base/i18n.h"
#include "base/text.h"
#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "export/http.h"
#include "export/metrics.h"
#include "gpu/nvml.h"
#include "store/journal.h"
#include "sys/machine_arch.h"
#include "sys/meminfo.h"
#include "sys/psi.h"

namespace headroom {
namespace {

struct Rendered {
  std::string prometheus;
  std::string openmetrics;
};

class ExportState {
 public:
  void Publish(std::shared_ptr<const Rendered> r) {
    std::lock_guard lock(mu_);
    rendered_ = std::move(r);
  }
  std::shared_ptr<const Rendered> Latest() const {
    std::lock_guard lock(mu_);
    return rendered_;
  }
  void CountResponse(int status) {
    std::lock_guard lock(mu_);
    ++requests_[status];
  }
  std::map<int, uint64_t> Requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }
  // Waits up to `d`; true when asked to stop.
  bool WaitStop(std::chrono::microseconds d) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, d, [&] { return stop_; });
  }
  void Stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::shared_ptr<const Rendered> rendered_;
  std::map<int, uint64_t> requests_;
};

struct SamplerConfig {
  SysRoot root;
  std::string nvml_lib{};
  std::optional<std::filesystem::path> journal{};
  std::chrono::microseconds interval{1'000'000};
  PlatformOverride platform{};  // config.toml [platform]
};

class Sampler {
 public:
  Sampler(SamplerConfig config, ExportState& state) : config_(std::move(config)), state_(state) {
    auto nvml = Nvml::Open(config_.nvml_lib);
    if (nvml)
      nvml_ = std::move(*nvml);
    else
      nvml_error_ = nvml.error().message;
    arch_ = MachineArch(config_.root);
  }
  const std::string& nvml_error() const { return nvml_error_; }

  // Untranslated: metric names, HELP text and label values are data for Prometheus.
  void SampleOnce() {
    const UntranslatedScope english;
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
          s.guard = GuardCounters{static_cast<uint64_t>(t->guard_runs),
                                  static_cast<uint64_t>(t->guard_kills),
                                  static_cast<uint64_t>(t->guard_warnings),
                                  static_cast<uint64_t>(t->sweep_trials_killed)};
        } else {
          journal_.reset();  // reopen next time (the file may have been replaced)
        }
      }
    }
    s.arch = arch_;
    s.version = HEADROOM_VERSION;
    s.samples_total = ++samples_;
    s.last_sample_seconds = last_seconds_;
    s.requests_by_code = state_.Requests();
    const auto families = BuildFamilies(s);
    auto r = std::make_shared<Rendered>();
    r->prometheus = RenderPrometheus(families);
    r->openmetrics = RenderOpenMetrics(families);
    state_.Publish(std::move(r));
    last_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  void Run() {
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

 private:
  SamplerConfig config_;
  ExportState& state_;
  std::unique_ptr<Nvml> nvml_;
  std::string nvml_error_;
  std::optional<Journal> journal_;
  ThrottleAccumulator throttle_;
  std::string arch_;
  uint64_t samples_ = 0;
  double last_seconds_ = 0;
};

// export's flags: the app, then the variables its options write.
struct ExportCommandFlags final : CommandFlags {
  CLI::App app{Tr("Serve this machine's readings as Prometheus metrics on /metrics: memory "
                  "(MemTotal, MemAvailable, free, "
                  "cached, swap), memory pressure (PSI), GPU temperature, power (with GB10's "
                  "sustained and rated figures), "
                  "energy, clocks, throttle reasons and time throttled per reason, utilization, "
                  "per-process GPU memory, the "
                  "journal's guard kills and warnings, and the platform. GPU memory on GB10 comes "
                  "from /proc/meminfo, "
                  "labelled source=\"meminfo\". Prometheus text format, or OpenMetrics when the "
                  "scraper asks for it.\n\n"
                  "Read-only; loopback only unless --listen names another address (a warning is "
                  "printed). SIGTERM, SIGINT "
                  "or SIGHUP stop it cleanly.\n\n"
                  "exit status: 0 stopped by a signal; 1 could not listen; 2 usage error"),
               "headroom export"};
  std::string listen = "127.0.0.1:9464", interval_text, nvml_lib, journal_flag, root_dir;
  bool no_journal = false;
  CLI::App& App() override { return app; }
};

}  // namespace

std::unique_ptr<CommandFlags> DefineExportFlags() {
  auto defined = std::make_unique<ExportCommandFlags>();
  auto& [app, listen, interval_text, nvml_lib, journal_flag, root_dir, no_journal] = *defined;
  app.add_option("--listen", listen,
                 Tr("HOST:PORT to serve on (default 127.0.0.1:9464; port 0 picks a free one)"));
  app.add_option(
      "--interval", interval_text,
      Tr("sampling period, 100ms to 1h (default 1s, or [export] interval in config.toml)"));
  AddNvmlLibFlag(app, nvml_lib);
  AddJournalFlag(app, journal_flag);
  app.add_flag("--no-journal", no_journal, Tr("export no guard counters"));
  AddRootFlag(app, root_dir);
  return defined;
}

int RunExportCommand(const CliEnv& env, CommandFlags& given_flags) {
  auto& [app, listen, interval_text, nvml_lib, journal_flag, root_dir, no_journal] =
      FlagsOf<ExportCommandFlags>(given_flags);
  try {
    auto address = ParseListenAddress(listen);
    if (!address) throw UsageError{address.error().message};
    // --interval, else HEADROOM_EXPORT_INTERVAL or [export] interval (held to the same
    // 100ms..1h when loaded), else 1s.
    if (interval_text.empty()) interval_text = ConfiguredText(env, SettingId::kExportInterval);
    auto interval = ParseDuration(interval_text);
    if (!interval) throw UsageError{"--interval: " + interval.error().message};
    if (*interval < std::chrono::milliseconds(100) || *interval > std::chrono::hours(1)) {
      throw UsageError{TrFormat("--interval: '{}' is outside 100ms..1h", interval_text)};
    }
    SamplerConfig config{
        SysRoot(root_dir.empty() ? env.default_root : std::filesystem::path(root_dir))};
    if (!root_dir.empty() && !std::filesystem::is_directory(config.root.Path("proc"))) {
      throw UsageError{TrFormat("--root: {} has no proc/ directory", root_dir)};
    }
    config.nvml_lib = ResolveNvmlLibrary(nvml_lib, std::getenv);
    config.interval = *interval;
    config.platform = env.config.settings.platform_override();
    if (!no_journal) {
      auto path = JournalPath(env, journal_flag);
      if (!path) throw UsageError{"--journal: " + path.error().message};
      config.journal = *path;
    }
    // Signals go to the signalfd, in every thread (the sampler starts after this).
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &mask, nullptr);
    const int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
    if (sfd < 0) {
      PrintError(env, "export: " + std::string(Tr("signalfd failed")));
      return kExitNegative;
    }
    HttpServerOptions opts;
    opts.host = address->first;
    opts.port = address->second;
    auto server = HttpServer::Listen(opts);
    if (!server) {
      PrintError(env, "export: " + server.error().message);
      ::close(sfd);
      return kExitNegative;
    }
    if (!IsLoopbackHost(opts.host)) {
      PrintError(
          env, "export: " +
                   TrFormat("warning: listening on {}, reachable from other machines: /metrics is "
                            "read-only but shows process names, memory and GPU figures",
                            opts.host));
    }
    ExportState state;
    Sampler sampler(config, state);
    sampler.SampleOnce();  // the first scrape has data
    const std::string shown_host =
        opts.host.find(':') != std::string::npos ? "[" + opts.host + "]" : opts.host;
    const std::string url = fmt::format("http://{}:{}/metrics", shown_host, server->port());
    std::fprintf(env.err, "headroom export: %s\n",
                 (sampler.nvml_error().empty()
                      ? TrFormat("serving {}, sampling every {}", url, interval_text)
                      // TRANSLATORS: {2} says why NVML could not be used.
                      : TrFormat("serving {0}, sampling every {1} (no GPU metrics: {2})", url,
                                 interval_text, sampler.nvml_error()))
                     .c_str());
    std::fflush(env.err);
    std::thread sampling([&] { sampler.Run(); });
    auto served = server->Serve(
        sfd,
        [&](const HttpRequest& req) -> HttpResponse {
          if (req.path == "/metrics") {
            const auto r = state.Latest();
            const bool om = req.accept.find("application/openmetrics-text") != std::string::npos;
            return {200, std::string(om ? kOpenMetricsContentType : kPrometheusContentType),
                    om ? r->openmetrics : r->prometheus};
          }
          if (req.path == "/")
            return {200, "text/plain; charset=utf-8", "headroom export: metrics at /metrics\n"};
          return {404, "text/plain; charset=utf-8", "not found: try /metrics\n"};
        },
        [&](int status) { state.CountResponse(status); });
    state.Stop();
    sampling.join();
    ::close(sfd);
    if (!served) {
      PrintError(env, "export: " + served.error().message);
      return kExitNegative;
    }
    std::fprintf(env.err, "headroom export: %s\n", Tr("stopped"));
    return kExitOk;
  } catch (const UsageError& e) {
    PrintError(env, "export: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
