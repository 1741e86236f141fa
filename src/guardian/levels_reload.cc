// Implementation notes: posix_spawn (no fork of the worker's address space), the child's
// stdout and stderr dup'd onto one pipe's write end, read with poll until EOF, the deadline
// or 4 KiB (a levels line is under 80 bytes); then the child is reaped, killed first when it
// is past the deadline. The caller blocks SIGTERM, SIGINT and SIGHUP, so the child starts with
// them unblocked and default (posix_spawnattr).
#include "guardian/levels_reload.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/clock.h"

extern char** environ;

namespace headroom {
namespace {

constexpr size_t kMaxOutput = 4096;

std::string FirstLine(std::string text) {
  if (const size_t nl = text.find('\n'); nl != std::string::npos) text.resize(nl);
  if (text.starts_with("headroom: ")) text.erase(0, 10);
  return text;
}

}  // namespace

Result<ReloadedLevels> ReadReloadedLevels(const std::string& program,
                                          const std::vector<std::string>& args,
                                          std::chrono::milliseconds limit) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return ErrnoError(Msg("pipe"));
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigemptyset(&all);
  for (const int s : {SIGTERM, SIGINT, SIGHUP, SIGPIPE}) sigaddset(&all, s);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> argv = {const_cast<char*>(program.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(const_cast<char*>("--print-levels"));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, program.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return ErrnoError(Msg("running {}", program), rc);
  }
  std::string out;
  const double deadline =
      ClockSeconds(CLOCK_MONOTONIC) + std::chrono::duration<double>(limit).count();
  bool timed_out = false;
  for (;;) {
    const double left_ms = (deadline - ClockSeconds(CLOCK_MONOTONIC)) * 1000;
    if (left_ms <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left_ms) + 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    char buf[512];
    const ssize_t got = ::read(fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    out.append(buf, static_cast<size_t>(got));
    if (out.size() > kMaxOutput) break;
  }
  ::close(fds[0]);
  if (timed_out || out.size() > kMaxOutput) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return Error{Msg("{} did not answer within {} ms", program, limit.count())};
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    if (!out.empty()) return Error{FirstLine(out)};
    return Error{Msg("{} failed (status {})", program, status)};
  }
  return DecodeReloadedLevels(out);
}

}  // namespace headroom
