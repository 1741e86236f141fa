// A test's body run in a forked helper process, for code that changes what a process keeps
// (the guard locks its memory, renices itself, sets its oom_score_adj, blocks signals): the
// test binary itself keeps none of it. The helper reports what went wrong as text through a
// pipe.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>

namespace headroom::testing {

// Runs `body` in a forked process; returns what it reported ("" for success), or why the
// helper itself failed.
inline std::string InHelper(const std::function<std::string()>& body) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return "pipe2 failed";
  const pid_t pid = ::fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    ::close(fds[0]);
    const std::string report = body();
    [[maybe_unused]] ssize_t n = ::write(fds[1], report.data(), report.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string report;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) report.append(buf, n);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return "the helper died (status " + std::to_string(status) + "): " + report;
  return report;
}

}  // namespace headroom::testing
