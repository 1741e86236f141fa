#include "cli/top/top_screen.h"

#include <fmt/format.h>
#include <langinfo.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "base/bytes.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "cli/top/node_panes.h"
#include "cli/top/top_view.h"
#include "top/cadence.h"
#include "top/terminal.h"
#include "top/top_json.h"

namespace headroom {
namespace {

// The width of --once's frame when neither $COLUMNS nor the terminal says.
constexpr size_t kBatchDefaultWidth = 100;
// --once lays out as if the terminal were this tall: every process and event fits.
constexpr size_t kBatchHeight = 10'000;

// The columns for batch frames: $COLUMNS, else the terminal's width, else 100.
size_t BatchWidth() {
  if (const char* columns = std::getenv("COLUMNS")) {
    if (auto n = ParsePositiveInt(columns); n && *n <= 10'000) return static_cast<size_t>(*n);
  }
  winsize ws{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return kBatchDefaultWidth;
}

bool LocaleIsUtf8() {
  const char* codeset = ::nl_langinfo(CODESET);
  return codeset != nullptr &&
         (std::strcmp(codeset, "UTF-8") == 0 || std::strcmp(codeset, "utf8") == 0);
}

// SIGINT, SIGTERM and SIGHUP blocked and read from a signalfd for the life of the object,
// the mask as it was afterwards: batch frames end on them with status 0, as docs/top.md says
// (they used to kill the process: 130, 143, 129).
class StopSignals {
 public:
  StopSignals() {
    sigemptyset(&mask_);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&mask_, s);
    ::sigprocmask(SIG_BLOCK, &mask_, &old_);
    fd_ = ::signalfd(-1, &mask_, SFD_CLOEXEC | SFD_NONBLOCK);
  }
  ~StopSignals() {
    // One that came during the last frame is taken here: unblocked, it would kill the process.
    while (Pending()) {
    }
    if (fd_ >= 0) ::close(fd_);
    ::sigprocmask(SIG_SETMASK, &old_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Waits until `until`; true when a stop signal came first (or was already pending).
  bool WaitUntil(std::chrono::steady_clock::time_point until) const {
    for (;;) {
      if (Pending()) return true;
      const auto left =
          std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now())
              .count();
      if (left <= 0) return false;
      if (fd_ < 0) {  // no signalfd: sleep, and let a signal end the process as before
        ::sigprocmask(SIG_SETMASK, &old_, nullptr);
        std::this_thread::sleep_until(until);
        return false;
      }
      pollfd p{fd_, POLLIN, 0};
      (void)::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 60'000)));
    }
  }

 private:
  bool Pending() const {
    if (fd_ < 0) return false;
    signalfd_siginfo info{};
    return ::read(fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info);
  }
  sigset_t mask_{}, old_{};
  int fd_ = -1;
};

}  // namespace

int RunTopBatch(const CliEnv& env, TopCollector& collector, const TopFlags& flags,
                const std::string& host) {
  const StopSignals stop;
  ViewOptions view;
  view.width = BatchWidth();
  view.height = kBatchHeight;
  view.colour = ColourMode::kMono;
  view.utf8 = !flags.json && LocaleIsUtf8();
  view.interval = flags.interval;
  view.host = host;
  view.batch = true;
  UiState ui;
  ui.sort = flags.sort;
  const int64_t n = flags.iterations.value_or(1);
  SampleCadence cadence(flags.interval, std::chrono::steady_clock::now());
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) {
      cadence.Advance(std::chrono::steady_clock::now(), /*skip_overrun=*/false);
      if (stop.WaitUntil(cadence.next())) break;  // the frames written stay whole
    }
    const TopSnapshot& s =
        collector.Refresh(std::chrono::system_clock::now(), std::chrono::steady_clock::now());
    if (flags.json) {
      // One object: indented; several: one per line (JSON lines), as a stream reader wants.
      const auto j = TopSnapshotJson(s, flags.interval, host);
      const int indent = n == 1 ? 2 : -1;
      std::fprintf(
          env.out, "%s\n",
          j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
    } else {
      if (i > 0) std::fputc('\n', env.out);
      std::fputs(FrameText(LayoutTop(s, collector.history(), ui, view)).c_str(), env.out);
    }
    std::fflush(env.out);
  }
  return kExitOk;
}

int RunTopNodes(const CliEnv& env, const std::vector<std::string>& node_flags,
                const TopFlags& flags) {
  if (flags.json)
    throw UsageError{Tr("--node: the panes are text; --json is this machine's snapshot")};
  if (!flags.iterations)
    throw UsageError{
        Tr("--node: give --once or --iterations N (the live screen shows this machine)")};
  std::vector<NodeUrl> nodes;
  for (const auto& text : node_flags) {
    auto url = ParseNodeUrl(text);
    if (!url) throw UsageError{"--node: " + TranslatedText(url.error().what)};
    nodes.push_back(std::move(*url));
  }
  const StopSignals stop;
  const int64_t n = flags.iterations.value_or(1);
  SampleCadence cadence(flags.interval, std::chrono::steady_clock::now());
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) {
      cadence.Advance(std::chrono::steady_clock::now(), /*skip_overrun=*/false);
      if (stop.WaitUntil(cadence.next())) break;
    }
    std::string frame = i > 0 ? "\n" : "";
    for (const NodeUrl& node : nodes) {
      auto page = FetchNodeMetrics(node, kNodeTimeout, kNodePageBytes);
      frame +=
          page ? NodePaneText(node, ParseNodeMetrics(*page)) : NodePaneText(node, page.error());
    }
    std::fputs(frame.c_str(), env.out);
    std::fflush(env.out);
  }
  return kExitOk;
}

int RunTopInteractive(TopCollector& collector, const TopFlags& flags, const std::string& host) {
  sigset_t mask;
  sigemptyset(&mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&mask, s);
  ::sigprocmask(SIG_BLOCK, &mask, nullptr);
  const int sig_fd = ::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sig_fd < 0) throw UsageError{fmt::format("signalfd: {}", std::strerror(errno))};
  auto terminal = Terminal::Open(flags.no_color);
  if (!terminal) {
    ::close(sig_fd);
    throw UsageError{TranslatedText(terminal.error().what)};
  }
  Terminal& term = **terminal;
  ViewOptions view;
  view.colour = term.colour();
  view.utf8 = LocaleIsUtf8();
  view.interval = flags.interval;
  view.host = host;
  UiState ui;
  ui.sort = flags.sort;
  std::optional<TopSnapshot> frozen;
  std::optional<History> frozen_history;

  SampleCadence cadence(flags.interval, std::chrono::steady_clock::now());
  bool draw = true;
  for (bool quit = false; !quit;) {
    const auto now = std::chrono::steady_clock::now();
    if (cadence.Due(now)) {
      collector.Refresh(std::chrono::system_clock::now(), now);
      cadence.Advance(now, /*skip_overrun=*/true);  // a stopped terminal: skip the slots
      draw = draw || !ui.paused;
    }
    if (draw) {
      view.width = term.width();
      view.height = term.height();
      const bool use_frozen = ui.paused && frozen && frozen_history;
      term.Draw(LayoutTop(use_frozen ? *frozen : collector.snapshot(),
                          use_frozen ? *frozen_history : collector.history(), ui, view));
      draw = false;
    }
    bool signalled = false;
    for (TopKey key :
         term.Wait(cadence.WaitFrom(std::chrono::steady_clock::now()), sig_fd, signalled)) {
      switch (ApplyKey(ui, key)) {
        case KeyAction::kQuit:
          quit = true;
          break;
        case KeyAction::kFreeze:
          frozen = collector.snapshot();
          frozen_history = collector.history();
          draw = true;
          break;
        case KeyAction::kRedraw:
          draw = true;
          break;
        case KeyAction::kNone:
          break;
      }
    }
    if (signalled) quit = true;
  }
  ::close(sig_fd);
  return kExitOk;
}

}  // namespace headroom
