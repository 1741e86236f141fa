// `headroom export`: a sampler thread (export/exporter.h: meminfo, PSI, NVML, the journal's
// guard counters -> metric families -> both text formats, every --interval) and an HTTP
// server on the main thread that serves the last rendering. SIGTERM, SIGINT or SIGHUP (a
// signalfd in the server's poll set, export/http.h OpenStopSignalFd) stop both; exit 0.
//
// Read-only: no endpoint changes anything, the journal is opened read-only.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "base/duration.h"
#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/export_live.h"
#include "cli/export_view.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "export/exporter.h"
#include "export/http.h"
#include "gpu/nvml.h"

namespace headroom {
namespace {

// export's flags: the app, then the variables its options write.
struct ExportCommandFlags final : CommandFlags {
  CLI::App app{Tr("Serve this machine's readings as Prometheus metrics on /metrics: memory "
                  "(MemTotal, MemAvailable, free, cached, swap), memory pressure (PSI), GPU "
                  "temperature, power (with GB10's sustained and rated figures), energy, clocks, "
                  "throttle reasons and time throttled per reason, utilization, per-process GPU "
                  "memory, the journal's guard kills and warnings, and the platform. GPU memory "
                  "on GB10 comes from /proc/meminfo, labelled source=\"meminfo\". Prometheus text "
                  "format, or OpenMetrics when the scraper asks for it.\n\n"
                  "Read-only; loopback only: another --listen address needs --allow-remote as "
                  "well (and a warning is printed). SIGTERM, SIGINT or SIGHUP stop it "
                  "cleanly.\n\n"
                  "exit status: 0 stopped by a signal; 1 could not listen; 2 usage error"),
               "headroom export"};
  std::string listen = "127.0.0.1:9464", interval_text, nvml_lib, journal_flag, root_dir;
  bool no_journal = false, allow_remote = false, no_dcgm_names = false;
  std::vector<std::string> nodes;
  CLI::App& App() override { return app; }
};

}  // namespace

std::unique_ptr<CommandFlags> DefineExportFlags() {
  auto defined = std::make_unique<ExportCommandFlags>();
  auto& [app, listen, interval_text, nvml_lib, journal_flag, root_dir, no_journal, allow_remote,
         no_dcgm_names, nodes] = *defined;
  app.add_option("--listen", listen,
                 Tr("HOST:PORT to serve on (default 127.0.0.1:9464; port 0 picks a free one)"));
  app.add_flag("--allow-remote", allow_remote,
               Tr("let --listen name an address other machines can reach (not loopback)"));
  app.add_option(
      "--interval", interval_text,
      Tr("sampling period, 100ms to 1h (default 1s, or [export] interval in config.toml)"));
  AddNvmlLibFlag(app, nvml_lib);
  AddJournalFlag(app, journal_flag);
  app.add_flag("--no-journal", no_journal, Tr("export no guard counters"));
  app.add_flag("--no-dcgm-names", no_dcgm_names,
               Tr("serve only headroom_* names, not the DCGM_FI_* ones DCGM's Grafana dashboard "
                  "reads"));
  AddRootFlag(app, root_dir);
  AddLiveNodeFlag(app, nodes);
  return defined;
}

namespace {

// The sampler's settings from the flags, else the configuration: --interval (or
// HEADROOM_EXPORT_INTERVAL, [export] interval, held to the same 100ms..1h when loaded,
// else 1s), --root, the NVML library, the journal for the guard counters.
ExportSamplerConfig ConfigFromFlags(const CliEnv& env, ExportCommandFlags& f) {
  if (f.interval_text.empty()) f.interval_text = ConfiguredText(env, SettingId::kExportInterval);
  auto interval = ParseDuration(f.interval_text);
  if (!interval) throw UsageError{"--interval: " + TranslatedText(interval.error().what)};
  if (*interval < std::chrono::milliseconds(100) || *interval > std::chrono::hours(1)) {
    throw UsageError{TrFormat("--interval: '{}' is outside 100ms..1h", f.interval_text)};
  }
  ExportSamplerConfig config{RootFromFlag(env, f.root_dir)};
  config.nvml_lib = ResolveNvmlLibrary(f.nvml_lib, std::getenv);
  config.interval = *interval;
  config.platform = env.config.settings.platform_override();
  config.dcgm_names = !f.no_dcgm_names;
  if (!f.no_journal) {
    auto path = JournalPath(env, f.journal_flag);
    if (!path) throw UsageError{"--journal: " + TranslatedText(path.error().what)};
    config.journal = *path;
  }
  return config;
}

}  // namespace

int RunExportCommand(const CliEnv& env, CommandFlags& given_flags) {
  auto& flags = FlagsOf<ExportCommandFlags>(given_flags);
  try {
    auto address = ParseListenAddress(flags.listen);
    if (!address) throw UsageError{TranslatedText(address.error().what)};
    if (!IsLoopbackHost(address->first) && !flags.allow_remote) {
      throw UsageError{TrFormat(
          "--listen: {} is not a loopback address: /metrics shows process names and memory "
          "figures; add --allow-remote to serve other machines",
          address->first)};
    }
    ExportSamplerConfig config = ConfigFromFlags(env, flags);
    LiveNodesThread nodes(flags.nodes, config.interval);
    config.nodes = nodes.nodes();
    const int sfd = OpenStopSignalFd();  // before the sampler starts: every thread blocks them
    if (sfd < 0) {
      PrintError(env, "export: " + std::string(Tr("signalfd failed")));
      return kExitNegative;
    }
    nodes.Start();
    HttpServerOptions opts;
    opts.host = address->first;
    opts.port = address->second;
    auto server = HttpServer::Listen(opts);
    if (!server) {
      PrintError(env, "export: " + TranslatedText(server.error().what));
      ::close(sfd);
      return kExitNegative;
    }
    if (!IsLoopbackHost(opts.host)) PrintExposedWarning(env, opts.host);
    ExportState state;
    // The sampler's metric names, HELP text and label values are data, English by
    // construction (export/metrics.h); NVML's error is a message, shown on stderr in the
    // user's language.
    ExportSampler sampler(config, state);
    sampler.SampleOnce();  // the first scrape has data
    PrintServing(env, MetricsUrl(opts.host, server->port()), flags.interval_text,
                 sampler.nvml_error());
    PrintLivePage(
        env, std::regex_replace(MetricsUrl(opts.host, server->port()), std::regex("metrics$"), ""));
    std::thread sampling([&] { sampler.Run(); });
    auto served = server->Serve(
        sfd, [&](const HttpRequest& req) { return ExportResponse(state, req); },
        [&](int status) { state.CountResponse(status); });
    state.Stop();
    sampling.join();
    ::close(sfd);
    if (!served) {
      PrintError(env, "export: " + TranslatedText(served.error().what));
      return kExitNegative;
    }
    PrintStopped(env);
    return kExitOk;
  } catch (const UsageError& e) {
    PrintError(env, "export: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
