// `headroom watch`: flags -> Sampler (NVML if it loads, /proc, sensors) -> one durable CSV row
// per interval (+ events on stderr and in --events) until stopped, or for the life of a
// command run through RunGuard (with its stdout and stderr teed to --log).
//
// Implementation notes.
//  - Without a command the loop runs on the main thread and waits in poll() on a signalfd
//    (INT, TERM, HUP): a signal ends the wait, never a row half-written, and watch exits 0.
//  - With a command the main thread runs RunGuard (which owns the signals: it forwards them
//    to the job); a sampler thread and, with --log, a tee thread run beside it. Both threads
//    are started with INT/TERM/HUP/CHLD/PIPE blocked, so the guard's signalfd gets every
//    signal and a closed terminal gives the tee EPIPE instead of killing watch. The main
//    thread's own mask is left as it was: the job inherits the mask RunGuard was called with.
//  - The sampling loop is samples/sample_loop.h, the tee run/job_tee.h (the job's bytes
//    through unchanged, stamped segments to the log). The job holds the pipes' write ends;
//    watch closes its copies after RunGuard returns (the job tree is then empty), so the tee
//    reads to EOF; a straggler that escaped the tree gets 2 s before the tee stops.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/bytes.h"
#include "base/durable_lines.h"
#include "base/duration.h"
#include "base/i18n.h"
#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/message_text.h"
#include "gpu/nvml.h"
#include "run/guard.h"
#include "run/guard_record.h"
#include "run/job_tee.h"
#include "samples/sample_events.h"
#include "samples/sample_loop.h"
#include "samples/sampler.h"
#include "samples/samples_csv.h"
#include "store/journal.h"
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

// The run in the journal: begun with a "files" event naming the samples, log and events
// files by absolute path (committed at once, so a run cut by a power-off still points at
// its files), finished with the row count. A journal that cannot be opened or written is a
// note on stderr, never a reason not to sample.
class WatchRecord {
 public:
  WatchRecord(const CliEnv& env, const std::string& flag, bool off,
              const std::vector<std::string>& command,
              const std::vector<std::pair<std::string, std::string>>& files)
      : env_(env) {
    if (off) return;
    auto path = JournalPath(env, flag);
    auto opened = path ? Journal::Open(*path) : Result<Journal>(path.error());
    if (!opened) {
      Note(opened.error().message);
      return;
    }
    journal_.emplace(std::move(*opened));
    const std::vector<std::string> recorded =
        command.empty() ? std::vector<std::string>{"headroom", "watch"} : command;
    auto id = journal_->BeginRun(RunKind::kWatch, recorded, std::chrono::system_clock::now());
    if (!id) {
      Note(id.error().message);
      journal_.reset();
      return;
    }
    run_id_ = *id;
    for (const auto& [name, file] : files) {
      std::error_code ec;
      files_[name] = file.empty() ? nlohmann::json(nullptr)
                                  : nlohmann::json(std::filesystem::absolute(file, ec).string());
    }
    if (auto added = journal_->AddEvent(*run_id_, "files", 0, std::chrono::system_clock::now(),
                                        files_.dump());
        !added) {
      Note(added.error().message);
    }
    std::fprintf(
        env_.err, "headroom watch: %s\n",
        TrFormat("run {0} in {1} (headroom explain --run {0})", *run_id_, path->string()).c_str());
  }
  // With --guard: who guards at which levels, for `headroom top` (run/guard_record.h).
  void Guarding(const SysRoot& real_root, uint64_t kill_below_bytes, uint64_t warn_below_bytes) {
    if (!journal_ || !run_id_) return;
    if (auto added = RecordGuardStart(
            *journal_, *run_id_, ThisGuardStart(real_root, kill_below_bytes, warn_below_bytes));
        !added) {
      Note(added.error().message);
    }
  }
  void Finish(const char* status, int exit_status, uint64_t rows) {
    if (!journal_ || !run_id_) return;
    nlohmann::json summary = files_;
    summary["rows"] = rows;
    if (auto done = journal_->FinishRun(*run_id_, status, exit_status, summary.dump(),
                                        std::chrono::system_clock::now());
        !done) {
      Note(done.error().message);
    }
  }

 private:
  void Note(const std::string& message) {
    std::fprintf(env_.err, "headroom watch: %s\n",
                 TrFormat("note: not recorded in the journal: {}", message).c_str());
  }
  const CliEnv& env_;
  std::optional<Journal> journal_;
  std::optional<int64_t> run_id_;
  nlohmann::json files_ = nlohmann::json::object();
};

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

int RunWatchCommand(const CliEnv& env, CommandFlags& given_flags) {
  auto& [app, interval_text, out_path, events_path, log_path, nvml_lib, root_dir, journal_flag,
         guard, no_journal, command] = FlagsOf<WatchCommandFlags>(given_flags);
  const SysRoot root(root_dir.empty() ? env.default_root : std::filesystem::path(root_dir));
  try {
    // --interval, else HEADROOM_WATCH_INTERVAL or [watch] interval (held to the same
    // 100ms minimum when loaded), else 30s.
    if (interval_text.empty()) interval_text = ConfiguredText(env, SettingId::kWatchInterval);
    auto parsed = ParseDuration(interval_text);
    if (!parsed) throw UsageError{"--interval: " + parsed.error().message};
    const auto interval = std::chrono::duration_cast<std::chrono::milliseconds>(*parsed);
    if (interval < kMinInterval) {
      throw UsageError{TrFormat("--interval: {} is below the minimum of 100ms", interval_text)};
    }
    if (command.empty() && (guard || !log_path.empty())) {
      throw UsageError{guard ? Tr("--guard: needs a command after --")
                             : Tr("--log: needs a command after --")};
    }

    // The GPU: optional. Without it the GPU columns are empty and the header says why. The
    // header's notes are data (the CSV's comment lines): NVML is opened untranslated, since
    // its error carries dlerror()'s text, which glibc translates too (the sampler's own notes
    // are English). The line on stderr is the same error in the user's language: a failed
    // open is made again for it (dlopen or nvmlInit failing costs nothing), and the English
    // text is shown should the second attempt succeed.
    std::vector<std::string> notes;
    std::unique_ptr<GpuBackend> gpu;
    const std::string library = ResolveNvmlLibrary(nvml_lib, std::getenv);
    auto nvml = [&] {
      const UntranslatedScope english;
      return Nvml::Open(library);
    }();
    if (nvml) {
      gpu = std::move(*nvml);
    } else {
      notes.push_back(nvml.error().message + "; GPU columns are empty");
      const auto shown = Nvml::Open(library);
      PrintError(env, shown ? nvml.error().message : shown.error().message);
    }
    Sampler sampler(root, std::move(gpu));
    sampler.OverridePlatform(env.config.settings.platform_override());
    for (const auto& n : sampler.notes()) notes.push_back(n);

    SamplesHeader header;
    header.host = HostName();
    header.device = sampler.platform().gpu_name.empty() ? "none" : sampler.platform().gpu_name;
    header.platform = std::string(PlatformKindName(sampler.platform().kind));
    header.interval_ms = interval.count();
    header.started = std::chrono::system_clock::now();
    header.extra_columns = sampler.extra_columns();
    header.notes = notes;
    auto csv = SamplesCsvWriter::Create(out_path, header, kSyncPeriod);
    if (!csv) throw UsageError{"--out: " + csv.error().message};
    std::optional<DurableLines> events, log;
    if (!events_path.empty()) {
      auto e = DurableLines::Create(events_path, kSyncPeriod);
      if (!e) throw UsageError{"--events: " + e.error().message};
      events.emplace(std::move(*e));
    }
    if (!log_path.empty()) {
      auto l = DurableLines::Create(log_path, kSyncPeriod);
      if (!l) throw UsageError{"--log: " + l.error().message};
      log.emplace(std::move(*l));
    }
    // The rows and the events' JSON are data, English by construction; an event's message is
    // the line on stderr, in the user's language.
    const int err_fd = fileno(env.err);
    SampleLoop loop(
        sampler, *csv, events ? &*events : nullptr,
        {[err_fd](const SampleEvent& e) {
           WriteAll(err_fd, fmt::format("headroom watch: {} {}: {}\n", FormatUtcIso8601(e.time),
                                        e.type, TranslatedText(e.message)));
         },
         [err_fd](const Error& e) { WriteAll(err_fd, "headroom: watch: " + e.message + "\n"); }});
    WatchRecord record(env, journal_flag, no_journal, command,
                       {{"samples", out_path}, {"log", log_path}, {"events", events_path}});

    if (command.empty()) {
      sigset_t mask;
      sigemptyset(&mask);
      for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&mask, s);
      ::sigprocmask(SIG_BLOCK, &mask, nullptr);
      const int sig_fd = ::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
      if (sig_fd < 0) throw UsageError{TrFormat("signalfd: {}", std::strerror(errno))};
      loop.Run(interval, sig_fd);
      signalfd_siginfo si{};
      const bool got = ::read(sig_fd, &si, sizeof si) == sizeof si;
      ::close(sig_fd);
      (void)csv->Sync();
      std::fprintf(env.err, "headroom watch: %s\n",
                   (got ? TrFormat("stopped by signal {}; {} samples in {}", si.ssi_signo,
                                   csv->rows(), out_path)
                        : TrFormat("stopped; {} samples in {}", csv->rows(), out_path))
                       .c_str());
      record.Finish("stopped", kExitOk, csv->rows());
      return kExitOk;
    }

    // With a command.
    auto info = ReadMemInfo(root);
    if (!info) throw UsageError{info.error().message};
    GuardOptions opt;
    opt.command = command;
    if (guard) {
      const uint64_t total = info->total_bytes().value_or(0);
      opt.min_available_bytes = KillLevelBytes(env, "", "--guard", total);
      opt.warn_available_bytes = WarnLevelBytes(env, "", "--guard", total, opt.min_available_bytes);
      // The identity is read from the real /proc, not --root's.
      record.Guarding(SysRoot(env.default_root), opt.min_available_bytes, opt.warn_available_bytes);
    }
    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
    if (log && (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0)) {
      throw UsageError{TrFormat("pipe: {}", std::strerror(errno))};
    }
    opt.stdout_fd = out_pipe[1];
    opt.stderr_fd = err_pipe[1];
    int stop_pipe[2];
    if (::pipe2(stop_pipe, O_CLOEXEC) != 0)
      throw UsageError{TrFormat("pipe: {}", std::strerror(errno))};
    std::atomic<bool> stop_tee{false};

    // Threads start with the signals blocked (see the notes above), then the main thread's
    // mask goes back to what it was.
    sigset_t block, old;
    sigemptyset(&block);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE}) sigaddset(&block, s);
    ::pthread_sigmask(SIG_BLOCK, &block, &old);
    std::thread sampler_thread([&] { loop.Run(interval, stop_pipe[0]); });
    std::thread tee_thread;
    if (log) {
      const TeeFds fds{out_pipe[0], err_pipe[0], fileno(env.out), fileno(env.err)};
      tee_thread = std::thread([fds, &log, &stop_tee] { TeeJobOutput(fds, *log, stop_tee); });
    }
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);

    std::FILE* guard_events_file =
        events_path.empty() ? nullptr : std::fopen(events_path.c_str(), "ae");
    GuardEvents guard_events(guard_events_file);
    // As in `headroom guard`: the --events lines RunGuard writes are English by construction;
    // its warning lines on stderr are in the user's language.
    auto summary = RunGuard(root, opt, guard_events, [&](const Message& line) {
      std::fprintf(env.err, "%s\n", TranslatedText(line).c_str());
    });
    if (guard_events_file) std::fclose(guard_events_file);

    // The job tree is empty: stop sampling after one last row, then drain the tee.
    WriteAll(stop_pipe[1], "x");
    sampler_thread.join();
    loop.SampleOnce();
    ::close(stop_pipe[0]);
    ::close(stop_pipe[1]);
    for (int fd : {out_pipe[1], err_pipe[1]}) {
      if (fd >= 0) ::close(fd);
    }
    stop_tee = true;
    if (tee_thread.joinable()) tee_thread.join();
    (void)csv->Sync();
    if (events) (void)events->Sync();
    if (log) (void)log->Sync();
    if (!summary) throw UsageError{summary.error().message};
    const double seconds = summary->duration_s;
    const uint64_t rows = csv->rows();
    const std::string line =
        summary->killed ? TrFormat(
                              "job killed by the guard (MemAvailable below the level) after {:.1f} "
                              "s; {} samples in {}",
                              seconds, rows, out_path)
        : summary->job_exit_code
            ? TrFormat("job exited with status {} after {:.1f} s; {} samples in {}",
                       *summary->job_exit_code, seconds, rows, out_path)
        : summary->job_signal
            ? TrFormat("job died of signal {} after {:.1f} s; {} samples in {}",
                       *summary->job_signal, seconds, rows, out_path)
            : TrFormat("job ended after {:.1f} s; {} samples in {}", seconds, rows, out_path);
    std::fprintf(env.err, "headroom watch: %s\n", line.c_str());
    record.Finish(summary->killed ? "killed-by-guard" : "exited", summary->exit_status,
                  csv->rows());
    return summary->exit_status;
  } catch (const UsageError& e) {
    PrintError(env, "watch: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
