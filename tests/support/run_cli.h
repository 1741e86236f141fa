// Runs the real headroom binary for CLI tests: arguments in, exit status and both output
// streams out. A bounded wait (the child is killed after `timeout_ms`) keeps a hang a
// failure, not a stuck suite.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace headroom::testing {

struct CliResult {
  int status = -1;  // exit status, or 128 + signal
  std::string out;
  std::string err;
  bool timed_out = false;
};

// In a child, before exec: the environment every program a test runs gets. The developer's
// configuration must not change what a test sees (docs/config.md): no config.toml, no
// HEADROOM_* settings, unless the test gives them in `env_extra` ("NAME=value" sets NAME, a
// bare "NAME" unsets it).
inline void SetChildEnvironment(const std::vector<std::string>& env_extra) {
  setenv("XDG_CONFIG_HOME", "/nonexistent/headroom-tests", 1);
  for (const char* v :
       {"HEADROOM_CONFIG", "HEADROOM_RESERVE", "HEADROOM_KILL_LEVEL", "HEADROOM_WARN_LEVEL",
        "HEADROOM_WATCH_INTERVAL", "HEADROOM_TOP_INTERVAL", "HEADROOM_EXPORT_INTERVAL",
        "HEADROOM_PLATFORM", "HEADROOM_SUSTAINED_POWER_W", "HEADROOM_RATED_POWER_W",
        "HEADROOM_GUARDIAN_KILL_LEVEL", "HEADROOM_GUARDIAN_WARN_LEVEL",
        "HEADROOM_GUARDIAN_GRACE"}) {
    unsetenv(v);
  }
  for (const auto& e : env_extra) putenv(const_cast<char*>(e.c_str()));
}

// Runs `argv` (argv[0] a path, or a name looked up on PATH) with `env_extra` added to the
// environment ("NAME=value" sets NAME, a bare "NAME" unsets it). The child inherits LC_ALL=C
// and no LANGUAGE from the test process (english_children_test.cc), so it speaks English
// unless `env_extra` clears LC_ALL and names a language. `cgroup_procs`: a cgroup.procs file the
// child joins before exec (a memory-limited backstop for tests that fill memory), or "".
inline CliResult RunProgram(const std::vector<std::string>& program, int timeout_ms = 20000,
                            const std::vector<std::string>& env_extra = {},
                            const std::string& cgroup_procs = "") {
  int out_pipe[2], err_pipe[2];
  CliResult r;
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) return r;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    std::vector<char*> argv;
    std::vector<std::string> copy = program;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    SetChildEnvironment(env_extra);
    if (!cgroup_procs.empty()) {
      const int fd = open(cgroup_procs.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd >= 0) {
        [[maybe_unused]] ssize_t n = write(fd, "0", 1);
        close(fd);
      }
    }
    execvp(copy.front().c_str(), argv.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  timespec start{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  int open_fds = 2;
  while (open_fds > 0) {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    const long elapsed =
        (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
    if (elapsed > timeout_ms) {
      kill(pid, SIGKILL);
      r.timed_out = true;
      break;
    }
    if (poll(fds, 2, 100) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buf[4096];
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  r.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  return r;
}

// The real headroom binary with `args`.
inline CliResult RunCli(const std::vector<std::string>& args, int timeout_ms = 20000,
                        const std::vector<std::string>& env_extra = {},
                        const std::string& cgroup_procs = "") {
  std::vector<std::string> program{HEADROOM_BINARY};
  program.insert(program.end(), args.begin(), args.end());
  return RunProgram(program, timeout_ms, env_extra, cgroup_procs);
}

// Starts `headroom args...` in the background with RunProgram's environment, its output to
// /dev/null; the caller waits for it (and kills it if the test ends early). -1 when fork fails.
inline pid_t StartCli(const std::vector<std::string>& args,
                      const std::vector<std::string>& env_extra = {}) {
  std::vector<std::string> copy{HEADROOM_BINARY};
  copy.insert(copy.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    SetChildEnvironment(env_extra);
    execv(HEADROOM_BINARY, argv.data());
    _exit(127);
  }
  return pid;
}

}  // namespace headroom::testing
