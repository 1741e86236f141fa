// `headroom watch`'s flags (docs/watch.md): the variables its options write, their
// definitions, and the readers of those that need more than a copy (--interval with its
// configured default, --events and --log as durable files, --nvml-lib, the journal, --guard's
// levels). Errors are UsageError naming the flag (exit 2).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/durable_lines.h"
#include "cli/cli.h"
#include "gpu/gpu.h"
#include "guard/guard.h"
#include "watch/watch_record.h"

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

// Before any work: what --out, --events and --log name, and no two of them one file
// (docs/cli.md, "Input and output files"); throws UsageError.
void CheckWatchOutputs(const WatchFlags& f);

// --events or --log (`flag`): a DurableLines file synced at least every `sync_period`; none
// for "".
std::optional<DurableLines> DurableLinesFlag(const std::string& path, const char* flag,
                                             std::chrono::milliseconds sync_period);

// --nvml-lib: the GPU, optional. Without it the GPU columns are empty and `notes` (the
// samples header's) says why in English; the line on stderr is in the user's language.
std::unique_ptr<GpuBackend> GpuFromFlag(const CliEnv& env, const std::string& nvml_lib,
                                        std::vector<std::string>& notes);

// --journal and --no-journal: the run in the journal, its place (or why it is not recorded)
// on stderr.
WatchRecord WatchRecordFromFlags(const CliEnv& env, const WatchFlags& f);

// The guard's options for the job: its command and, with --guard, the guard's configured
// levels for a machine of `total` bytes of MemTotal (none without: the job is not killed).
GuardOptions WatchGuardOptions(const CliEnv& env, const WatchFlags& f, uint64_t total);

}  // namespace headroom
