// `headroom top`: flags -> TopCollector (Sampler + pool-holder survey + running guards from
// the journal + events, src/top/collector.h) -> LayoutTop (a pure Frame, cli/top/top_view.h) ->
// the terminal through ncurses (top/terminal.h), or, with --once / --iterations N, plain
// text (or --json) on stdout without curses at all.
//
// Implementation notes.
//  - The loops (batch frames, the live screen with its cadence, keys and signals) are in
//    cli/top/top_screen.h; this file reads the flags and builds the collector.
//  - Paused: sampling, events and history go on; the display is drawn from the snapshot
//    and history copied when p was pressed, so a resize or a sort while paused lays out the
//    frozen readings again.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/duration.h"
#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "cli/top/top_screen.h"
#include "gpu/nvml.h"
#include "guard/guard_record.h"
#include "store/journal.h"
#include "top/cadence.h"
#include "top/collector.h"

namespace headroom {
namespace {

// top's flags: the app, then the variables its options write.
struct TopCommandFlags final : CommandFlags {
  CLI::App app{
      Tr("A live view of the memory pool, memory pressure, the GPU (temperature, power against "
         "the platform's caps, SM clock, throttle reasons), the processes holding the pool with "
         "their caps, the running guards' levels and events as they happen.\n\n"
         "Keys: q quit, p pause, s sort the processes (mem, pid, name), h help.\n\n"
         "exit status: 0 on q or SIGINT/SIGTERM/SIGHUP (the terminal is restored); 2 usage error, "
         "or stdout is not a terminal without --once, --iterations or --json"),
      "headroom top"};
  std::string interval_text, root_dir, nvml_lib, journal_flag, sort_text = "mem", iterations_text;
  bool once = false;
  std::vector<std::string> nodes;
  TopFlags flags;
  CLI::App& App() override { return app; }
};

}  // namespace

std::unique_ptr<CommandFlags> DefineTopFlags() {
  auto defined = std::make_unique<TopCommandFlags>();
  auto& [app, interval_text, root_dir, nvml_lib, journal_flag, sort_text, iterations_text, once,
         nodes, flags] = *defined;
  app.add_option(
      "--interval", interval_text,
      Tr("time between samples, at least 100ms (default 1s, or [top] interval in config.toml)"));
  AddRootFlag(app, root_dir);
  AddNvmlLibFlag(app, nvml_lib);
  AddJournalFlag(app, journal_flag);
  app.add_flag("--no-color", flags.no_color,
               Tr("no colours: bold, reverse and underline only (also when NO_COLOR is set)"));
  app.add_option("--sort", sort_text, Tr("order of the processes: mem, pid or name (default mem)"));
  app.add_flag("--once", once, Tr("print one frame as plain text and exit (no terminal needed)"));
  app.add_option("--node", nodes,
                 Tr("show this node's `headroom export` page instead (http://HOST:PORT, an IP "
                    "address; repeatable, one pane a node; with --once or --iterations)"));
  app.add_option("--iterations", iterations_text,
                 Tr("print N frames, one per interval, as plain text and exit"));
  AddJsonFlag(app, flags.json);
  return defined;
}

namespace {

// --interval (else [top] interval), --sort, --once and --iterations into `flags`.
void ReadTopFlags(const CliEnv& env, TopCommandFlags& f) {
  auto& [app, interval_text, root_dir, nvml_lib, journal_flag, sort_text, iterations_text, once,
         nodes, flags] = f;
  // --interval, else HEADROOM_TOP_INTERVAL or [top] interval, else 1s.
  if (interval_text.empty()) interval_text = ConfiguredText(env, SettingId::kTopInterval);
  auto parsed = ParseDuration(interval_text);
  if (!parsed) throw UsageError{"--interval: " + TranslatedText(parsed.error().what)};
  flags.interval = std::chrono::duration_cast<std::chrono::milliseconds>(*parsed);
  if (flags.interval < kMinTopInterval) {
    throw UsageError{TrFormat("--interval: {} is below the minimum of 100ms", interval_text)};
  }
  auto sort = ParseSortOrder(sort_text);
  if (!sort) throw UsageError{TrFormat("--sort: '{}' is not one of mem, pid, name", sort_text)};
  flags.sort = *sort;
  if (once && !iterations_text.empty())
    throw UsageError{Tr("--once and --iterations: give one of them")};
  if (!iterations_text.empty()) {
    auto n = ParsePositiveInt(iterations_text);
    if (!n) throw UsageError{"--iterations: " + TranslatedText(n.error().what)};
    flags.iterations = *n;
  }
  if (once || flags.json) flags.iterations = flags.iterations.value_or(1);
}

}  // namespace

int RunTopCommand(const CliEnv& env, CommandFlags& given_flags) {
  auto& [app, interval_text, root_dir, nvml_lib, journal_flag, sort_text, iterations_text, once,
         nodes, flags] = FlagsOf<TopCommandFlags>(given_flags);
  try {
    ReadTopFlags(env, FlagsOf<TopCommandFlags>(given_flags));
    if (!nodes.empty()) return RunTopNodes(env, nodes, flags);  // other machines' exporters
    const SysRoot root = RootFromFlag(env, root_dir);
    // ncurses draws wide characters under a UTF-8 LC_CTYPE (main sets it only where it found
    // catalogs); the layout's widths are base/display_width's in every locale.
    if (!flags.json) std::setlocale(LC_CTYPE, "");
    const char* no_color = std::getenv("NO_COLOR");  // no-color.org: set and not empty
    flags.no_color = flags.no_color || (no_color != nullptr && *no_color != '\0');

    std::unique_ptr<GpuBackend> gpu;
    std::string gpu_note;
    const std::string library = ResolveNvmlLibrary(nvml_lib, std::getenv);
    if (auto nvml = Nvml::Open(library)) {
      gpu = std::move(*nvml);
    } else {
      gpu_note = TranslatedText(nvml.error().what);
      // Asked for by name (as ps does): worth a line, where a line does not garble a screen.
      if (!library.empty() && flags.iterations) PrintError(env, gpu_note);
    }
    CollectorOptions options;
    options.host = LocalHostName();
    options.self = ::getpid();
    options.platform_override = env.config.settings.platform_override();
    if (auto path = JournalPath(env, journal_flag)) {
      options.journal = *path;
    } else {
      options.journal_note = TranslatedText(path.error().what);
    }
    const std::string host = options.host;
    TopCollector collector(root, std::move(gpu), gpu_note, std::move(options));
    if (flags.iterations) return RunTopBatch(env, collector, flags, host);
    return RunTopInteractive(collector, flags, host);
  } catch (const UsageError& e) {
    PrintError(env, "top: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
