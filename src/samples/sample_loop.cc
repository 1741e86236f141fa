// Implementation notes: moved from cli/watch_cmd.cc unchanged but for the printing, which
// is now the caller's (the callbacks).
#include "samples/sample_loop.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "base/duration.h"
#include "base/message.h"

namespace headroom {

SampleLoop::SampleLoop(Sampler& sampler, SamplesCsvWriter& csv, DurableLines* events,
                       SampleLoopSinks sinks)
    : sampler_(sampler),
      csv_(csv),
      detector_(sampler.platform()),
      events_(events),
      sinks_(std::move(sinks)) {}

void SampleLoop::SampleOnce() {
  const Sample s = sampler_.Read(std::chrono::system_clock::now());
  if (auto wrote = csv_.Append(s); !wrote && !write_failed_) {
    write_failed_ = true;
    if (sinks_.on_write_error) sinks_.on_write_error(wrote.error());
  }
  for (const SampleEvent& e : detector_.Feed(s)) {
    if (sinks_.on_event) sinks_.on_event(e);
    if (events_) (void)events_->Append(SampleEventJson(e));
  }
}

void SampleLoop::Run(std::chrono::milliseconds interval, int stop_fd) {
  auto next = std::chrono::steady_clock::now();
  for (;;) {
    SampleOnce();
    next += interval;
    const auto now = std::chrono::steady_clock::now();
    if (next < now) next = now + interval - (now - next) % interval;  // overran: skip slots
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(next - now).count();
    pollfd pfd{stop_fd, POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(wait)) > 0) return;
  }
}

Result<int> SampleUntilSignal(SampleLoop& loop, std::chrono::milliseconds interval) {
  sigset_t mask;
  sigemptyset(&mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&mask, s);
  ::sigprocmask(SIG_BLOCK, &mask, nullptr);
  const int sig_fd = ::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sig_fd < 0) return Error{Msg("signalfd: {}", ErrnoArg{errno})};
  loop.Run(interval, sig_fd);
  signalfd_siginfo si{};
  const bool got = ::read(sig_fd, &si, sizeof si) == sizeof si;
  ::close(sig_fd);
  return got ? static_cast<int>(si.ssi_signo) : 0;
}

Result<std::chrono::milliseconds> ParseSampleInterval(std::string_view text) {
  auto parsed = ParseDuration(text);
  if (!parsed) return Error{MsgFrom("--interval: {}", parsed.error().what)};
  const auto interval = std::chrono::duration_cast<std::chrono::milliseconds>(*parsed);
  if (interval < kMinSampleInterval) {
    return Error{Msg("--interval: {} is below the minimum of 100ms", text)};
  }
  return interval;
}

SamplesHeader SamplesHeaderFor(const Sampler& sampler, std::chrono::milliseconds interval,
                               std::string host, std::vector<std::string> notes, WallTime started) {
  SamplesHeader header;
  header.host = host.empty() ? "unknown" : std::move(host);
  header.device = sampler.platform().gpu_name.empty() ? "none" : sampler.platform().gpu_name;
  header.platform = std::string(PlatformKindName(sampler.platform().kind));
  header.interval_ms = interval.count();
  header.started = started;
  header.extra_columns = sampler.extra_columns();
  header.notes = std::move(notes);
  return header;
}

}  // namespace headroom
