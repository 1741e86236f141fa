// Implementation notes: three pipes, all close-on-exec in the parent; the child dup2s its
// ends onto 0, 1 and 2 and execs. An exec failure comes back as errno on a fourth
// close-on-exec pipe. The parent writes the request (a few hundred bytes: fits the pipe
// buffer, so the write never waits), closes stdin and polls stdout and stderr until both
// close or the deadline passes; then SIGKILL to the PID it forked and a blocking waitpid.
#include "doctor/link_probe.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <nlohmann/json.hpp>
#include <vector>

namespace headroom {
namespace {

struct ProbePipe {
  int fds[2] = {-1, -1};
  ~ProbePipe() {
    for (int& fd : fds)
      if (fd >= 0) ::close(fd);
  }
  void Close(int end) {
    if (fds[end] >= 0) ::close(fds[end]);
    fds[end] = -1;
  }
};

double ProbeNow() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int StatusOf(int wstatus) {
  if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
  return 255;
}

// Reads what is there on `fd` into `into`, keeping at most `cap` bytes (the head for
// stdout, the tail for stderr). False at end of file or on an error.
bool Drain(int fd, std::string& into, size_t cap, bool keep_tail) {
  char buf[4096];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  into.append(buf, static_cast<size_t>(n));
  if (into.size() > cap) {
    if (keep_tail) {
      into.erase(0, into.size() - cap);
    } else {
      into.resize(cap);
    }
  }
  return true;
}

}  // namespace

std::string LinkProbeRequestLine(const LinkProbeRequest& r) {
  const nlohmann::ordered_json j = {{"role", r.role},
                                    {"host", r.host},
                                    {"port", r.port},
                                    {"rank", r.rank},
                                    {"world", r.world},
                                    {"secret", r.secret},
                                    {"size_bytes", r.size_bytes},
                                    {"repeats", r.repeats},
                                    {"timeout_s", r.timeout_s}};
  return j.dump() + "\n";
}

Result<LinkProbeOutput> RunLinkProbe(const std::string& python, const std::string& script,
                                     const LinkProbeRequest& request, double grace_s) {
  ProbePipe in, out, err, exec_err;
  for (ProbePipe* p : {&in, &out, &err, &exec_err})
    if (::pipe2(p->fds, O_CLOEXEC) != 0) return ErrnoError("pipe");
  const std::string line = LinkProbeRequestLine(request);
  std::vector<char*> argv = {const_cast<char*>(python.c_str()), const_cast<char*>(script.c_str()),
                             nullptr};
  const pid_t pid = ::fork();
  if (pid < 0) return ErrnoError("fork");
  if (pid == 0) {
    ::dup2(in.fds[0], STDIN_FILENO);
    ::dup2(out.fds[1], STDOUT_FILENO);
    ::dup2(err.fds[1], STDERR_FILENO);
    ::execv(argv[0], argv.data());
    const int e = errno;
    [[maybe_unused]] ssize_t n = ::write(exec_err.fds[1], &e, sizeof e);
    ::_exit(127);
  }
  in.Close(0);
  out.Close(1);
  err.Close(1);
  exec_err.Close(1);
  int exec_errno = 0;
  if (::read(exec_err.fds[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno) {
    ::waitpid(pid, nullptr, 0);
    return ErrnoError(Msg("cannot run {}", python), exec_errno);
  }
  // The child has the read end; a probe that died already makes this EPIPE, seen below.
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &old);
  [[maybe_unused]] ssize_t written = ::write(in.fds[1], line.data(), line.size());
  ::sigaction(SIGPIPE, &old, nullptr);
  in.Close(1);

  LinkProbeOutput result;
  const double deadline = ProbeNow() + request.timeout_s + grace_s;
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    const double left = deadline - ProbeNow();
    if (left <= 0) {
      result.timed_out = true;
      break;
    }
    pollfd fds[2] = {{out_open ? out.fds[0] : -1, POLLIN, 0},
                     {err_open ? err.fds[0] : -1, POLLIN, 0}};
    const int ready = ::poll(fds, 2, static_cast<int>(left * 1000) + 1);
    if (ready < 0 && errno != EINTR) return ErrnoError("poll");
    if (ready <= 0) continue;
    if (out_open && fds[0].revents)
      out_open = Drain(out.fds[0], result.out, kMaxLinkProbeOutput, false);
    if (err_open && fds[1].revents)
      err_open = Drain(err.fds[0], result.err, kLinkProbeStderrTail, true);
  }
  if (result.timed_out) ::kill(pid, SIGKILL);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  result.status = StatusOf(wstatus);
  return result;
}

}  // namespace headroom
