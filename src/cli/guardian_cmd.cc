// `headroom guardian` (docs/guardian.md): flags (cli/guardian_flags.h) -> the real readers
// (guardian/guardian_sources.h) -> the loop (guardian/guardian_loop.h) between waits for
// SIGTERM, SIGINT (stop) or SIGHUP (config read again) -> each event printed and recorded.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#include "base/bytes.h"
#include "base/safe_file.h"
#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/guardian_flags.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "gpu/nvml.h"
#include "guardian/guardian_record.h"
#include "guardian/guardian_sources.h"
#include "guardian/on_event.h"
#include "sys/meminfo.h"
#include "sys/memory_lock.h"

namespace headroom {
namespace {

struct GuardianCommandFlags final : CommandFlags {
  CLI::App app{
      Tr("Guard the whole machine: when MemAvailable falls to the kill level, end the one job "
         "that holds the pool, counting what no RSS shows (NVML's GPU memory per process, "
         "memfds, shared memory), never PID 1, kernel threads, sshd, systemd's services, the "
         "display server or the login manager; a job under `headroom guard` is left to its "
         "guard. Each decision is one line: who, why, who else was considered.\n\n"
         "Runs until SIGTERM or SIGINT; SIGHUP reads the configuration again. Test with --dry-run "
         "and "
         "--only.\n\n"
         "exit status: 0 stopped by a signal; 1 could not start; 2 usage error"),
      "headroom guardian"};
  GuardianFlags fl;
  CLI::App& App() override { return app; }
};

}  // namespace

std::unique_ptr<CommandFlags> DefineGuardianFlags() {
  auto defined = std::make_unique<GuardianCommandFlags>();
  AddGuardianFlags(defined->app, defined->fl);
  return defined;
}

int RunGuardianCommand(const CliEnv& env, CommandFlags& given_flags) {
  using namespace std::chrono_literals;
  GuardianFlags& f = FlagsOf<GuardianCommandFlags>(given_flags).fl;
  const SysRoot root(env.default_root);
  try {
    auto info = ReadMemInfo(root);
    if (!info) throw UsageError{TranslatedText(info.error().what)};
    const uint64_t total = info->total_bytes().value_or(0);
    const GuardianOptions options = GuardianOptionsFromFlags(env, f, total);
    if (!f.events_path.empty()) CheckOutputFlag(f.events_path, "--events");
    // The running guards' registry is read even with --no-journal, which only stops recording.
    std::optional<std::filesystem::path> registry, journal;
    if (auto path = JournalPath(env, f.journal_flag))
      registry = *path;
    else if (!f.no_journal)
      throw UsageError{"--journal: " + TranslatedText(path.error().what)};
    if (!f.no_journal) journal = registry;
    MemAvailableReader available(root);
    if (!available.ok() || !available.Read()) {
      PrintError(env, Tr("guardian: cannot read MemAvailable from proc/meminfo"));
      return kExitNegative;
    }
    std::FILE* events = nullptr;
    if (!f.events_path.empty()) {
      auto opened = OpenAppendStream(f.events_path);
      if (!opened) throw UsageError{"--events: " + TranslatedText(opened.error().what)};
      events = *opened;
    }
    GpuProcessReader gpu(
        f.no_nvml ? std::nullopt
                  : std::optional<std::string>(ResolveNvmlLibrary(f.nvml_lib, std::getenv)));
    if (!gpu.loaded() && !f.no_nvml) {
      PrintError(env,
                 Tr("guardian: no GPU memory per process (NVML): ") + TranslatedText(gpu.note()));
    }
    GuardianRecord record(journal, {"guardian"}, events,
                          [&](const Message& m) { PrintError(env, m); });
    record.Start(root, options.min_available_bytes, options.warn_available_bytes);
    std::unique_ptr<OnEventRunner> on_event;
    if (!f.on_event.empty()) on_event = std::make_unique<OnEventRunner>(f.on_event, 10s);
    GuardianIo io;
    io.now_s = GuardianMonotonicNow;
    io.read_available = [&] { return available.Read(); };
    io.read_gpu = [&] { return gpu.Read(); };
    if (registry) io.live_guards = [&] { return ReadLiveGuards(*registry, root); };
    io.drop_caches = [&] { return ReleaseDriverPools(root); };
    std::optional<PsiFullTrigger> psi;
    if (f.psi_kill) psi.emplace(root);
    if (psi && !psi->ok()) PrintError(env, Tr("guardian: --psi-kill: no PSI trigger"));
    if (psi && psi->ok()) io.psi_full = [&] { return psi->Fired(); };
    io.emit = [&](const GuardianEvent& e) {
      fmt::print(env.out, "headroom guardian: {}\n", TranslatedText(e.line));
      std::fflush(env.out);
      record.Event(e, GuardianMonotonicNow());
      if (on_event && !on_event->Start(e, GuardianMonotonicNow())) {
        PrintError(env, Tr("guardian: --on-event: not run (too many still running)"));
      }
    };
    sigset_t set;
    sigemptyset(&set);
    for (const int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, s);
    ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
    ::signal(SIGPIPE, SIG_IGN);
    if (const auto err = LockOwnPagesOnFault()) {
      PrintError(env, TrFormat("guardian: mlockall: {} (its pages may be reclaimed under the "
                               "pressure it acts on)",
                               std::strerror(*err)));
    }
    GuardianLoop loop(root, options, io);
    fmt::print(env.out, "{}\n",
               TrFormat("headroom guardian: watching: kill level {}, warning level {}, grace "
                        "{} ms{}",
                        FormatBoth(options.min_available_bytes),
                        FormatBoth(options.warn_available_bytes), options.grace.count(),
                        options.dry_run ? Tr(" (dry run: nothing is signalled)") : ""));
    std::fflush(env.out);
    for (;;) {
      const auto period = loop.Step();
      if (on_event) on_event->Poll(GuardianMonotonicNow());
      const int sig = WaitForGuardianSignal(set, period);
      if (sig != SIGHUP && sig != 0) break;
      GuardianOptions again;
      std::string why;
      if (sig == SIGHUP && ReloadGuardianOptions(env, f, total, again, why)) {
        loop.Reconfigure(again.min_available_bytes, again.warn_available_bytes, again.grace);
      } else if (sig == SIGHUP) {
        PrintError(env, TrFormat("guardian: SIGHUP: the settings are kept: {}", why));
      }
    }
    record.Finish(loop.counts());
    if (events != nullptr) std::fclose(events);
    fmt::print(env.out, "{}\n",
               TrFormat("headroom guardian: stopped; {} kills, {} warnings", loop.counts().kills,
                        loop.counts().warnings));
    return kExitOk;
  } catch (const UsageError& e) {
    PrintError(env, "guardian: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
