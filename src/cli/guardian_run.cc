// Implementation notes: the body that `headroom guardian` ran in its own process until the
// lean worker existed, moved here unchanged in behaviour; the only new part is SIGHUP, which
// asks `io.reload` for the levels (the worker runs `headroom guardian --print-levels`, the
// in-process run reads its flags and config.toml again).
#include "cli/guardian_run.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <optional>

#include "base/bytes.h"
#include "base/safe_file.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "guardian/guardian_record.h"
#include "guardian/guardian_sources.h"
#include "guardian/on_event.h"
#include "sys/memory_lock.h"

namespace headroom {

int RunGuardian(const SysRoot& root, const GuardianRunSettings& s, const GuardianRunIo& run_io) {
  using namespace std::chrono_literals;
  GuardianOptions options = s.options;
  options.choice.self = ::getpid();
  const auto print_error = [&](std::string_view text) { PrintErrorLine(run_io.err, text); };
  MemAvailableReader available(root);
  if (!available.ok() || !available.Read()) {
    print_error(Tr("guardian: cannot read MemAvailable from proc/meminfo"));
    return 1;
  }
  std::FILE* events = nullptr;
  if (!s.events_path.empty()) {
    auto opened = OpenAppendStream(s.events_path);
    if (!opened) {
      print_error("guardian: --events: " + TranslatedText(opened.error().what));
      return 2;
    }
    events = *opened;
  }
  GpuProcessReader gpu(s.nvml_library);
  if (!gpu.loaded() && s.nvml_library) {
    print_error(Tr("guardian: no GPU memory per process (NVML): ") + TranslatedText(gpu.note()));
  }
  GuardianRecord record(s.journal, s.run_id, events,
                        [&](const Message& m) { print_error(TranslatedText(m)); });
  std::unique_ptr<OnEventRunner> on_event;
  if (!s.on_event.empty()) on_event = std::make_unique<OnEventRunner>(s.on_event, 10s);
  GuardianIo io;
  io.now_s = GuardianMonotonicNow;
  io.read_available = [&] { return available.Read(); };
  io.read_gpu = [&] { return gpu.Read(); };
  if (s.registry) io.live_guards = [&] { return ReadLiveGuards(*s.registry, root); };
  io.drop_caches = [&] { return ReleaseDriverPools(root); };
  std::optional<PsiFullTrigger> psi;
  if (s.psi_kill) psi.emplace(root);
  if (psi && !psi->ok()) print_error(Tr("guardian: --psi-kill: no PSI trigger"));
  if (psi && psi->ok()) io.psi_full = [&] { return psi->Fired(); };
  io.emit = [&](const GuardianEvent& e) {
    fmt::print(run_io.out, "headroom guardian: {}\n", TranslatedText(e.line));
    std::fflush(run_io.out);
    record.Event(e, GuardianMonotonicNow());
    if (on_event && !on_event->Start(e, GuardianMonotonicNow())) {
      print_error(Tr("guardian: --on-event: not run (too many still running)"));
    }
  };
  sigset_t set;
  sigemptyset(&set);
  for (const int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, sig);
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  if (const auto err = LockOwnPagesOnFault()) {
    print_error(
        TrFormat("guardian: mlockall: {} (its pages may be reclaimed under the "
                 "pressure it acts on)",
                 std::strerror(*err)));
  }
  GuardianLoop loop(root, options, io);
  fmt::print(run_io.out, "{}\n",
             TrFormat("headroom guardian: watching: kill level {}, warning level {}, grace "
                      "{} ms{}",
                      FormatBoth(options.min_available_bytes),
                      FormatBoth(options.warn_available_bytes), options.grace.count(),
                      options.dry_run ? Tr(" (dry run: nothing is signalled)") : ""));
  std::fflush(run_io.out);
  for (;;) {
    const auto period = loop.Step();
    if (on_event) on_event->Poll(GuardianMonotonicNow());
    const int sig = WaitForGuardianSignal(set, period);
    if (sig != SIGHUP && sig != 0) break;
    if (sig != SIGHUP) continue;
    ReloadedLevels again;
    std::string why = Tr("no configuration to read again");
    if (run_io.reload && run_io.reload(again, why)) {
      loop.Reconfigure(again.min_available_bytes, again.warn_available_bytes, again.grace);
    } else {
      print_error(TrFormat("guardian: SIGHUP: the settings are kept: {}", why));
    }
  }
  record.Finish(loop.counts());
  if (events != nullptr) std::fclose(events);
  fmt::print(run_io.out, "{}\n",
             TrFormat("headroom guardian: stopped; {} kills, {} warnings", loop.counts().kills,
                      loop.counts().warnings));
  return 0;
}

}  // namespace headroom
