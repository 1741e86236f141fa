// `headroom watch`: flags -> Sampler (NVML if it loads, /proc, sensors) -> one durable CSV row
// per interval (+ events on stderr and in --events) until stopped, or for the life of a
// command run through RunGuard (with its stdout and stderr teed to --log).
//
// Implementation notes.
//  - Without a command the loop runs on the main thread until INT, TERM or HUP
//    (SampleUntilSignal, samples/sample_loop.h), and watch exits 0.
//  - With a command: RunWatchedJob (run/watched_job.h), the guard on the main thread, the
//    sampler and the tee on threads of their own. The journal's run is run/watch_record.h.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/durable_lines.h"
#include "base/duration.h"
#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "gpu/nvml.h"
#include "run/guard.h"
#include "run/guard_record.h"
#include "run/job_tee.h"
#include "run/watch_record.h"
#include "run/watched_job.h"
#include "samples/sample_events.h"
#include "samples/sample_loop.h"
#include "samples/sampler.h"
#include "samples/samples_csv.h"
#include "sys/meminfo.h"

namespace headroom {
namespace {

// The longest a written row or event waits for its fsync (docs/watch.md "Durability").
constexpr std::chrono::milliseconds kSyncPeriod{5000};
// The shortest --interval: a full sample costs well under 1 ms (bench/sampler_cost.cc), but
// NVML's power is a 1 s average and its utilization a 1/6-1 s window: faster rows repeat them.
constexpr std::chrono::milliseconds kMinInterval{100};

// The samples header's host: this machine's name, "unknown" when it cannot be had.
std::string HostName() {
  std::string name = LocalHostName();
  return name.empty() ? "unknown" : name;
}

// The line on stderr at the end of a job.
std::string JobEndLine(const GuardSummary& summary, uint64_t rows, const std::string& out_path) {
  const double seconds = summary.duration_s;
  if (summary.killed) {
    return TrFormat(
        "job killed by the guard (MemAvailable below the level) after {:.1f} s; {} samples in {}",
        seconds, rows, out_path);
  }
  if (summary.job_exit_code) {
    return TrFormat("job exited with status {} after {:.1f} s; {} samples in {}",
                    *summary.job_exit_code, seconds, rows, out_path);
  }
  if (summary.job_signal) {
    return TrFormat("job died of signal {} after {:.1f} s; {} samples in {}", *summary.job_signal,
                    seconds, rows, out_path);
  }
  return TrFormat("job ended after {:.1f} s; {} samples in {}", seconds, rows, out_path);
}

// watch's flags: the app, then the variables its options write.
struct WatchCommandFlags final : CommandFlags {
  CLI::App app{
      TrFormat(
          "Sample GPU temperature, power, clocks, throttle reasons, memory and pressure into a "
          "CSV, "
          "with events as they happen.\n\n"
          "  headroom watch [options]                 until SIGINT/SIGTERM (exit 0)\n"
          "  headroom watch [options] -- CMD [ARGS...] for the life of CMD\n\n"
          "Each row is written whole and fsync'd at least every {} s, so the file survives a "
          "power-off (docs/watch.md has the columns and units). With a command, its output goes "
          "to the terminal unchanged and, with --log, to FILE with an arrival time per line "
          "(split at \\n and \\r).\n\n"
          "exit status: with a command, the command's own (its exit code, or 128 + signal; {} "
          "when --guard killed it); without, 0 when stopped by a signal; 2 usage error",
          kSyncPeriod.count() / 1000, kExitGuardKilled),
      "headroom watch"};
  std::string interval_text, out_path = "samples.csv", events_path, log_path, nvml_lib, root_dir,
                             journal_flag;
  bool guard = false, no_journal = false;
  std::vector<std::string> command;
  CLI::App& App() override { return app; }
};

}  // namespace

std::unique_ptr<CommandFlags> DefineWatchFlags() {
  auto defined = std::make_unique<WatchCommandFlags>();
  auto& [app, interval_text, out_path, events_path, log_path, nvml_lib, root_dir, journal_flag,
         guard, no_journal, command] = *defined;
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
  return defined;
}

namespace {

// --interval, else HEADROOM_WATCH_INTERVAL or [watch] interval (held to the same 100ms
// minimum when loaded), else 30s.
std::chrono::milliseconds IntervalFlag(const CliEnv& env, std::string text) {
  if (text.empty()) text = ConfiguredText(env, SettingId::kWatchInterval);
  auto parsed = ParseDuration(text);
  if (!parsed) throw UsageError{"--interval: " + TranslatedText(parsed.error().what)};
  const auto interval = std::chrono::duration_cast<std::chrono::milliseconds>(*parsed);
  if (interval < kMinInterval) {
    throw UsageError{TrFormat("--interval: {} is below the minimum of 100ms", text)};
  }
  return interval;
}

// The GPU: optional. Without it the GPU columns are empty and the header says why: the
// CSV's comment line in English, the line on stderr in the user's language (dlerror's text
// inside both is English, gpu/dl_error.h).
std::unique_ptr<GpuBackend> OpenGpu(const CliEnv& env, const std::string& nvml_lib,
                                    std::vector<std::string>& notes) {
  auto nvml = Nvml::Open(ResolveNvmlLibrary(nvml_lib, std::getenv));
  if (nvml) return std::move(*nvml);
  notes.push_back(EnglishText(nvml.error().what) + "; GPU columns are empty");
  PrintError(env, nvml.error());
  return nullptr;
}

SamplesHeader HeaderOf(const Sampler& sampler, std::chrono::milliseconds interval,
                       std::vector<std::string> notes) {
  SamplesHeader header;
  header.host = HostName();
  header.device = sampler.platform().gpu_name.empty() ? "none" : sampler.platform().gpu_name;
  header.platform = std::string(PlatformKindName(sampler.platform().kind));
  header.interval_ms = interval.count();
  header.started = std::chrono::system_clock::now();
  header.extra_columns = sampler.extra_columns();
  header.notes = std::move(notes);
  return header;
}

// --events or --log: a DurableLines file, none for "".
std::optional<DurableLines> LinesFlag(const std::string& path, const char* flag) {
  if (path.empty()) return std::nullopt;
  auto lines = DurableLines::Create(path, kSyncPeriod);
  if (!lines) throw UsageError{std::string(flag) + ": " + TranslatedText(lines.error().what)};
  return std::move(*lines);
}

// The run in the journal, unless --no-journal; its place on stderr.
WatchRecord Record(const CliEnv& env, const WatchCommandFlags& f) {
  if (f.no_journal) return {};
  const auto path = JournalPath(env, f.journal_flag);
  WatchRecord record(
      path, f.command, {{"samples", f.out_path}, {"log", f.log_path}, {"events", f.events_path}},
      [&env](const Error& e) {
        std::fprintf(
            env.err, "headroom watch: %s\n",
            TrFormat("note: not recorded in the journal: {}", TranslatedText(e.what)).c_str());
      });
  if (record.id()) {
    std::fprintf(
        env.err, "headroom watch: %s\n",
        TrFormat("run {0} in {1} (headroom explain --run {0})", *record.id(), path->string())
            .c_str());
  }
  return record;
}

// What a run with a command writes into: the loop (and its CSV and events) and the log.
struct WatchFiles {
  SampleLoop& loop;
  SamplesCsvWriter& csv;
  DurableLines* events;
  DurableLines* log;
};

// With a command: the job under the guard (with --guard at its levels), sampled, teed.
int RunJob(const CliEnv& env, const SysRoot& root, const WatchCommandFlags& f,
           const WatchFiles& files, std::chrono::milliseconds interval, WatchRecord& record) {
  auto info = ReadMemInfo(root);
  if (!info) throw UsageError{TranslatedText(info.error().what)};
  GuardOptions opt;
  opt.command = f.command;
  if (f.guard) {
    const uint64_t total = info->total_bytes().value_or(0);
    opt.min_available_bytes = KillLevelBytes(env, "", "--guard", total);
    opt.warn_available_bytes = WarnLevelBytes(env, "", "--guard", total, opt.min_available_bytes);
    // The identity is read from the real /proc, not --root's.
    record.Guarding(SysRoot(env.default_root), opt.min_available_bytes, opt.warn_available_bytes);
  }
  // As in `headroom guard`: the --events lines RunGuard writes are English by construction;
  // its warning lines on stderr are in the user's language.
  auto summary =
      RunWatchedJob(root, opt, files.loop, interval, files.log,
                    {fileno(env.out), fileno(env.err), f.events_path}, [&](const Message& line) {
                      return std::fprintf(env.err, "%s\n", TranslatedText(line).c_str()) >= 0;
                    });
  (void)files.csv.Sync();
  if (files.events) (void)files.events->Sync();
  if (files.log) (void)files.log->Sync();
  if (!summary) throw UsageError{TranslatedText(summary.error().what)};
  std::fprintf(env.err, "headroom watch: %s\n",
               JobEndLine(*summary, files.csv.rows(), f.out_path).c_str());
  record.Finish(summary->killed ? "killed-by-guard" : "exited", summary->exit_status,
                files.csv.rows());
  return summary->exit_status;
}

}  // namespace

int RunWatchCommand(const CliEnv& env, CommandFlags& given_flags) {
  auto& f = FlagsOf<WatchCommandFlags>(given_flags);
  const SysRoot root(f.root_dir.empty() ? env.default_root : std::filesystem::path(f.root_dir));
  try {
    const auto interval = IntervalFlag(env, f.interval_text);
    if (f.command.empty() && (f.guard || !f.log_path.empty())) {
      throw UsageError{f.guard ? Tr("--guard: needs a command after --")
                               : Tr("--log: needs a command after --")};
    }
    std::vector<std::string> notes;
    Sampler sampler(root, OpenGpu(env, f.nvml_lib, notes));
    sampler.OverridePlatform(env.config.settings.platform_override());
    for (const auto& n : sampler.notes()) notes.push_back(n);
    auto csv =
        SamplesCsvWriter::Create(f.out_path, HeaderOf(sampler, interval, notes), kSyncPeriod);
    if (!csv) throw UsageError{"--out: " + TranslatedText(csv.error().what)};
    auto events = LinesFlag(f.events_path, "--events");
    auto log = LinesFlag(f.log_path, "--log");
    // The rows and the events' JSON are data, English by construction; an event's message is
    // the line on stderr, in the user's language.
    const int err_fd = fileno(env.err);
    SampleLoop loop(sampler, *csv, events ? &*events : nullptr,
                    {[err_fd](const SampleEvent& e) {
                       WriteAll(err_fd,
                                fmt::format("headroom watch: {} {}: {}\n", FormatUtcIso8601(e.time),
                                            e.type, TranslatedText(e.message)));
                     },
                     [err_fd](const Error& e) {
                       WriteAll(err_fd, "headroom: watch: " + TranslatedText(e.what) + "\n");
                     }});
    WatchRecord record = Record(env, f);

    if (f.command.empty()) {
      auto signal = SampleUntilSignal(loop, interval);
      if (!signal) throw UsageError{TranslatedText(signal.error().what)};
      (void)csv->Sync();
      std::fprintf(env.err, "headroom watch: %s\n",
                   (*signal ? TrFormat("stopped by signal {}; {} samples in {}", *signal,
                                       csv->rows(), f.out_path)
                            : TrFormat("stopped; {} samples in {}", csv->rows(), f.out_path))
                       .c_str());
      record.Finish("stopped", kExitOk, csv->rows());
      return kExitOk;
    }

    return RunJob(env, root, f, {loop, *csv, events ? &*events : nullptr, log ? &*log : nullptr},
                  interval, record);
  } catch (const UsageError& e) {
    PrintError(env, "watch: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
