// A real tmux for CLI tests of full-screen commands (`headroom top`): one private server per
// session (tmux -L with a unique socket name, -f /dev/null so no user configuration takes
// part), a detached session of a set size running a shell script, and the pane read back
// with capture-pane. Every wait polls up to a deadline; the destructor kills the server, so
// a failing test leaves no tmux (and no command inside it) behind.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace headroom::testing {

struct ToolResult {
  int status = -1;  // exit status, or 128 + signal; -1: could not start
  std::string out;
};

// Runs `argv` (found on PATH) with stdout and stderr captured together, killed after
// `timeout_ms`.
inline ToolResult RunTool(const std::vector<std::string>& argv, int timeout_ms = 10000) {
  ToolResult r;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return r;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  std::vector<char*> args;
  std::vector<std::string> copy = argv;
  for (auto& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (rc != 0) {
    ::close(pipe_fds[0]);
    return r;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    pollfd p{pipe_fds[0], POLLIN, 0};
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      break;
    }
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
    if (n <= 0) break;
    r.out.append(buf, static_cast<size_t>(n));
  }
  ::close(pipe_fds[0]);
  int wstatus = 0;
  ::waitpid(pid, &wstatus, 0);
  r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  return r;
}

class TmuxSession {
 public:
  // Starts `tmux new-session -d -x W -y H` running `sh script`. tmux runs with LANG=C.UTF-8
  // and -u, so its panes hold UTF-8 whatever the test's own locale.
  TmuxSession(size_t width, size_t height, const std::string& script) {
    static std::atomic<int> counter{0};
    socket_ = "headroom-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    started_ = Tmux({"new-session", "-d", "-x", std::to_string(width), "-y", std::to_string(height),
                     "-s", "t", "sh " + script})
                   .status == 0;
  }
  ~TmuxSession() { Tmux({"kill-server"}); }
  TmuxSession(const TmuxSession&) = delete;
  TmuxSession& operator=(const TmuxSession&) = delete;

  bool started() const { return started_; }

  ToolResult Tmux(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {"env", "-u", "TMUX",  "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "tmux",
                                     "-u",  "-L", socket_, "-f",           "/dev/null"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunTool(argv);
  }

  // The visible pane; with `escapes`, with the attributes and colours as SGR sequences.
  std::string Capture(bool escapes = false) const {
    std::vector<std::string> args = {"capture-pane", "-p", "-t", "t"};
    if (escapes) args.push_back("-e");
    return Tmux(args).out;
  }
  // A tmux format about the pane, e.g. "#{alternate_on}".
  std::string Format(const std::string& format) const {
    std::string out = Tmux({"display-message", "-p", "-t", "t", format}).out;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }
  void SendKeys(const std::string& keys) const { Tmux({"send-keys", "-t", "t", "-l", keys}); }
  void Resize(size_t width, size_t height) const {
    Tmux({"resize-window", "-t", "t", "-x", std::to_string(width), "-y", std::to_string(height)});
  }

  // Polls the pane until `done(capture)` or the deadline; the last capture either way.
  bool WaitFor(const std::function<bool(const std::string&)>& done, int timeout_ms,
               std::string* last = nullptr, bool escapes = false) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    std::string screen;
    for (;;) {
      screen = Capture(escapes);
      if (done(screen)) break;
      if (std::chrono::steady_clock::now() > deadline) {
        if (last) *last = screen;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (last) *last = screen;
    return true;
  }
  bool WaitForText(const std::string& text, int timeout_ms, std::string* last = nullptr) const {
    return WaitFor([&](const std::string& s) { return s.find(text) != std::string::npos; },
                   timeout_ms, last);
  }

 private:
  std::string socket_;
  bool started_ = false;
};

}  // namespace headroom::testing
