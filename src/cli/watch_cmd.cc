// `headroom watch`: flags (cli/watch_flags.h) -> Sampler (NVML if it loads, /proc, sensors)
// -> one durable CSV row per interval (+ events on stderr and in --events) until stopped, or
// for the life of a command run through RunGuard (with its stdout and stderr teed to --log).
//
// Implementation notes.
//  - Without a command the loop runs on the main thread until INT, TERM or HUP
//    (SampleUntilSignal, samples/sample_loop.h), and watch exits 0.
//  - With a command: RunWatchedJob (watch/watched_job.h), the guard on the main thread, the
//    sampler and the tee on threads of their own. The journal's run is watch/watch_record.h.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "base/durable_lines.h"
#include "cli/cli.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "cli/watch_flags.h"
#include "cli/watch_view.h"
#include "guard/guard.h"
#include "guard/guard_record.h"
#include "samples/sample_loop.h"
#include "samples/sampler.h"
#include "samples/samples_csv.h"
#include "sys/meminfo.h"
#include "watch/watch_record.h"
#include "watch/watched_job.h"

namespace headroom {
namespace {

// The longest a written row or event waits for its fsync (docs/watch.md "Durability").
constexpr std::chrono::milliseconds kSyncPeriod{5000};

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
  WatchFlags fl;
  CLI::App& App() override { return app; }
};

}  // namespace

std::unique_ptr<CommandFlags> DefineWatchFlags() {
  auto defined = std::make_unique<WatchCommandFlags>();
  AddWatchFlags(defined->app, defined->fl);
  return defined;
}

namespace {

// What a run with a command writes into: the loop (and its CSV and events) and the log.
struct WatchFiles {
  SampleLoop& loop;
  SamplesCsvWriter& csv;
  DurableLines* events;
  DurableLines* log;
};

// With a command: the job under the guard (with --guard at its levels), sampled, teed.
int RunJob(const CliEnv& env, const SysRoot& root, const WatchFlags& f, const WatchFiles& files,
           std::chrono::milliseconds interval, WatchRecord& record) {
  auto info = ReadMemInfo(root);
  if (!info) throw UsageError{TranslatedText(info.error().what)};
  GuardOptions opt = WatchGuardOptions(env, f, info->total_bytes().value_or(0));
  // The identity is read from the real /proc, not --root's.
  if (f.guard)
    record.Guarding(SysRoot(env.default_root), opt.min_available_bytes, opt.warn_available_bytes);
  // As in `headroom guard`: the --events lines RunGuard writes are English by construction;
  // its warning lines on stderr are in the user's language.
  auto summary =
      RunWatchedJob(root, opt, {files.loop, interval}, files.log,
                    {fileno(env.out), fileno(env.err), f.events_path}, [&](const Message& line) {
                      return std::fprintf(env.err, "%s\n", TranslatedText(line).c_str()) >= 0;
                    });
  (void)files.csv.Sync();
  if (files.events) (void)files.events->Sync();
  if (files.log) (void)files.log->Sync();
  if (!summary) throw UsageError{TranslatedText(summary.error().what)};
  PrintWatchJobEnd(env, *summary, files.csv.rows(), f.out_path);
  record.Finish(summary->killed ? "killed-by-guard" : "exited", summary->exit_status,
                files.csv.rows());
  return StatusAfterWrites(env, "watch", summary->exit_status,
                           {&files.csv.file(), files.events, files.log});
}

}  // namespace

int RunWatchCommand(const CliEnv& env, CommandFlags& given_flags) {
  WatchFlags& f = FlagsOf<WatchCommandFlags>(given_flags).fl;
  const SysRoot root(f.root_dir.empty() ? env.default_root : std::filesystem::path(f.root_dir));
  try {
    const auto interval = WatchIntervalFlag(env, f.interval_text);
    if (f.command.empty() && (f.guard || !f.log_path.empty())) {
      throw UsageError{f.guard ? Tr("--guard: needs a command after --")
                               : Tr("--log: needs a command after --")};
    }
    CheckWatchOutputs(f);
    std::vector<std::string> notes;
    Sampler sampler(root, GpuFromFlag(env, f.nvml_lib, notes));
    sampler.OverridePlatform(env.config.settings.platform_override());
    for (const auto& n : sampler.notes()) notes.push_back(n);
    auto csv = SamplesCsvWriter::Create(f.out_path,
                                        SamplesHeaderFor(sampler, interval, LocalHostName(), notes,
                                                         std::chrono::system_clock::now()),
                                        kSyncPeriod);
    if (!csv) throw UsageError{"--out: " + TranslatedText(csv.error().what)};
    auto events = DurableLinesFlag(f.events_path, "--events", kSyncPeriod);
    auto log = DurableLinesFlag(f.log_path, "--log", kSyncPeriod);
    // The rows and the events' JSON are data, English by construction; an event's message is
    // the line on stderr, in the user's language.
    const int err_fd = fileno(env.err);
    SampleLoop loop(sampler, *csv, events ? &*events : nullptr,
                    {[err_fd](const SampleEvent& e) { PrintWatchEvent(err_fd, e); },
                     [err_fd](const Error& e) { PrintWatchWriteError(err_fd, e); }});
    WatchRecord record = WatchRecordFromFlags(env, f);

    if (f.command.empty()) {
      auto signal = SampleUntilSignal(loop, interval);
      if (!signal) throw UsageError{TranslatedText(signal.error().what)};
      (void)csv->Sync();
      PrintWatchStopped(env, *signal, csv->rows(), f.out_path);
      record.Finish("stopped", kExitOk, csv->rows());
      return StatusAfterWrites(env, "watch", kExitOk, {&csv->file(), events ? &*events : nullptr});
    }

    return RunJob(env, root, f, {loop, *csv, events ? &*events : nullptr, log ? &*log : nullptr},
                  interval, record);
  } catch (const UsageError& e) {
    PrintError(env, "watch: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
