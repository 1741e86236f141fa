// A child process a test starts and owns (the guardian's tests: balloons, the guardian
// itself, a namespace around both): exec of an argv with the tests' environment, output to
// /dev/null or a file, optionally in a cgroup from before exec; killed and reaped by its pid
// when the test ends unless it was reaped before. Every wait is bounded.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "run_cli.h"

namespace headroom::testing {

class StartedChild {
 public:
  // `env`: "NAME=value" added to the child's environment (SetChildEnvironment). `err_path`:
  // where its stderr goes ("" /dev/null). `cgroup_procs`: a cgroup.procs file the child
  // joins before exec ("" none), so that whatever it forks starts in that cgroup.
  explicit StartedChild(std::vector<std::string> argv, std::vector<std::string> env = {},
                        const std::string& err_path = "", const std::string& cgroup_procs = "") {
    pid_ = ::fork();
    if (pid_ == 0) {
      std::vector<char*> args;
      for (auto& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      const int err =
          err_path.empty() ? null : ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
      ::dup2(err < 0 ? null : err, 2);
      if (!cgroup_procs.empty()) {
        const int procs = ::open(cgroup_procs.c_str(), O_WRONLY);
        if (procs < 0 || ::write(procs, "0", 1) != 1) _exit(126);
        ::close(procs);
      }
      SetChildEnvironment(env);
      ::execv(args[0], args.data());
      _exit(127);
    }
  }
  ~StartedChild() {
    if (!reaped_ && pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  StartedChild(const StartedChild&) = delete;
  StartedChild& operator=(const StartedChild&) = delete;

  pid_t pid() const { return pid_; }
  // Its wait status once it ended within `ms`; -1 when it still runs.
  int Reap(int ms) {
    for (int i = 0; i <= ms / 10; ++i) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        reaped_ = true;
        return status;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }
  // SIGTERM, then its wait status (bounded: 10 s), or -1.
  int Stop() {
    ::kill(pid_, SIGTERM);
    return Reap(10000);
  }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

}  // namespace headroom::testing
