#include "cli/watch_flags.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "base/safe_file.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "cli/watch_view.h"
#include "gpu/nvml.h"
#include "samples/sample_loop.h"

namespace headroom {

void AddWatchFlags(CLI::App& app, WatchFlags& flags) {
  auto& [interval_text, out_path, events_path, log_path, nvml_lib, root_dir, journal_flag, guard,
         no_journal, command] = flags;
  app.add_option(
      "--interval", interval_text,
      Tr("time between samples, at least 100ms (default 30s, or [watch] interval in config.toml)"));
  app.add_option("--out", out_path,
                 Tr("the samples CSV (default samples.csv; replaced if it exists)"));
  app.add_option("--events", events_path, Tr("write events as JSON lines to FILE"));
  app.add_option(
      "--log", log_path,
      Tr("with a command: tee its stdout and stderr to FILE, each line stamped on arrival"));
  app.add_flag(
      "--guard", guard,
      Tr("with a command: kill the job when MemAvailable falls below the guard's default level "
         "([guard] kill_level in config.toml, else the larger of 4GiB and 8% of MemTotal)"));
  AddNvmlLibFlag(app, nvml_lib);
  AddRootFlag(app, root_dir);
  AddJournalFlag(app, journal_flag);
  app.add_flag("--no-journal", no_journal, Tr("do not record the run"));
  app.add_option("command", command, Tr("the job, after --"));
}

std::chrono::milliseconds WatchIntervalFlag(const CliEnv& env, std::string text) {
  if (text.empty()) text = ConfiguredText(env, SettingId::kWatchInterval);
  auto interval = ParseSampleInterval(text);
  if (!interval) throw UsageError{TranslatedText(interval.error().what)};
  return *interval;
}

std::optional<DurableLines> DurableLinesFlag(const std::string& path, const char* flag,
                                             std::chrono::milliseconds sync_period) {
  if (path.empty()) return std::nullopt;
  auto lines = DurableLines::Create(path, sync_period);
  if (!lines) throw UsageError{std::string(flag) + ": " + TranslatedText(lines.error().what)};
  return std::move(*lines);
}

// The GPU: optional. Without it the GPU columns are empty and the header says why: the
// CSV's comment line in English, the line on stderr in the user's language (dlerror's text
// inside both is English, gpu/dl_error.h).
std::unique_ptr<GpuBackend> GpuFromFlag(const CliEnv& env, const std::string& nvml_lib,
                                        std::vector<std::string>& notes) {
  auto nvml = Nvml::Open(ResolveNvmlLibrary(nvml_lib, std::getenv));
  if (nvml) return std::move(*nvml);
  notes.push_back(EnglishText(nvml.error().what) + "; GPU columns are empty");
  PrintError(env, nvml.error());
  return nullptr;
}

// The run in the journal, unless --no-journal; its place on stderr.
WatchRecord WatchRecordFromFlags(const CliEnv& env, const WatchFlags& f) {
  if (f.no_journal) return {};
  const auto path = JournalPath(env, f.journal_flag);
  WatchRecord record(path, f.command,
                     {{"samples", f.out_path}, {"log", f.log_path}, {"events", f.events_path}},
                     [&env](const Error& e) { PrintWatchNotRecorded(env, e); });
  if (record.id()) PrintWatchRecorded(env, *record.id(), *path);
  return record;
}

GuardOptions WatchGuardOptions(const CliEnv& env, const WatchFlags& f, uint64_t total) {
  GuardOptions opt;
  opt.command = f.command;
  if (f.guard) {
    opt.min_available_bytes = KillLevelBytes(env, "", "--guard", total);
    opt.warn_available_bytes = WarnLevelBytes(env, "", "--guard", total, opt.min_available_bytes);
  }
  // The companion's step records beside the stamped log (docs/companion.md), for explain and
  // report; under --guard the guard may ask it for a checkpoint before the kill (SIGUSR1).
  if (!f.log_path.empty()) {
    const std::string records = f.log_path + ".steps.jsonl";
    opt.extra_env = {"HEADROOM_STEP_RECORDS=" + records,
                     f.guard ? "HEADROOM_CHECKPOINT_SIGNAL=10" : "HEADROOM_CHECKPOINT_SIGNAL=none"};
    if (f.guard) {
      CheckpointOptions cp;
      cp.records_path = records;
      opt.checkpoint = cp;
    }
  }
  return opt;
}

void CheckWatchOutputs(const WatchFlags& f) {
  const std::vector<NamedOutput> outputs{
      {"--out", f.out_path}, {"--events", f.events_path}, {"--log", f.log_path}};
  if (auto refused = CheckOutputPaths(outputs)) throw UsageError{TranslatedText(refused->what)};
}

}  // namespace headroom
