// `headroom watch`'s flags (docs/watch.md): the variables its options write, their
// definitions, and the readers of the two that need more than a copy (--interval with its
// configured default, --events and --log as durable files). Errors are UsageError naming the
// flag (exit 2).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "base/durable_lines.h"
#include "cli/cli.h"

namespace CLI {
class App;
}

namespace headroom {

struct WatchFlags {
  std::string interval_text, out_path = "samples.csv", events_path, log_path, nvml_lib, root_dir,
                             journal_flag;
  bool guard = false, no_journal = false;
  std::vector<std::string> command;
};

// Every option of watch's on `app`, in --help's order; the job is the positional after --.
void AddWatchFlags(CLI::App& app, WatchFlags& flags);

// --interval, else HEADROOM_WATCH_INTERVAL or [watch] interval (held to the same 100ms
// minimum when loaded), else 30s.
std::chrono::milliseconds WatchIntervalFlag(const CliEnv& env, std::string text);

// --events or --log (`flag`): a DurableLines file synced at least every `sync_period`; none
// for "".
std::optional<DurableLines> DurableLinesFlag(const std::string& path, const char* flag,
                                             std::chrono::milliseconds sync_period);

}  // namespace headroom
