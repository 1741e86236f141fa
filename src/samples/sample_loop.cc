// Implementation notes: moved from cli/watch_cmd.cc unchanged but for the printing, which
// is now the caller's (the callbacks).
#include "samples/sample_loop.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

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

}  // namespace headroom
