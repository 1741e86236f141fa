// Implementation notes.
//  - Order in Spawn: the signal mask first (a SIGCHLD or SIGTERM from here on is read from
//    the signalfd, never lost), then the exec-error pipe, then fork. Each is owned by an
//    object before the next step, so a failed pipe2 or fork returns with nothing held: the
//    mask is back as the caller had it and no descriptor is left open.
//  - The child: the caller's mask back, its own session (setsid), PR_SET_PDEATHSIG when
//    asked (and a check that the guard did not die before it), stdout/stderr, the cgroup,
//    oom_score_adj, the nice value back (a raise of the nice value is always permitted), the
//    extra environment, execvp. Only async-signal-safe calls after fork
//    but putenv (the strings are prepared before the fork; glibc's putenv does not allocate
//    when the environment has room, and the child execs or exits right after).
//  - exec errors come back through a close-on-exec pipe: a read of 4 bytes means execvp
//    failed (the child then exits 127 and is reaped here), end-of-file means it ran.
//  - The pidfd is opened before the guard ever reaps: until then the PID cannot be reused.
//  - Spare descriptors (ReserveDescriptors): closed while the tree is listed and signalled,
//    opened again after (nothing else runs on the guard's thread in between), so a guard whose
//    descriptors ran out (a flood of connections to the group's port, issue 29) still lists
//    the whole tree. A tree larger than the spares allow is signalled in batches: when no
//    pidfd can be opened, the members listed so far are signalled and their pidfds closed.
#include "guard/child.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>

#include "guard/pidfd.h"

namespace headroom {
namespace {

// SIGKILLed members whose pidfds are kept for process_mrelease, at most this many per pass.
constexpr size_t kMaxReleasePidfds = 256;

void WriteFileQuietly(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  [[maybe_unused]] ssize_t n = ::write(fd, text.data(), text.size());
  ::close(fd);
}

}  // namespace

class Child::SpareScope {
 public:
  explicit SpareScope(const Child& child) : child_(child) {
    if (child_.spare_users_++ == 0) child_.spare_.clear();
  }
  ~SpareScope() {
    if (--child_.spare_users_ == 0) child_.RefillSpares();
  }
  SpareScope(const SpareScope&) = delete;
  SpareScope& operator=(const SpareScope&) = delete;

 private:
  const Child& child_;
};

SignalScope::SignalScope() {
  sigset_t mask;
  sigemptyset(&mask);
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE}) {
    sigaddset(&mask, s);
  }
  ::pthread_sigmask(SIG_BLOCK, &mask, &old_mask_);
  fd_.reset(::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
}

SignalScope::SignalScope(SignalScope&& other) noexcept
    : fd_(std::move(other.fd_)), old_mask_(other.old_mask_), restore_(other.restore_) {
  other.restore_ = false;
}

SignalScope::~SignalScope() {
  fd_.reset();
  if (restore_) ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

std::optional<int> SignalScope::Next() {
  if (fd_.get() < 0) return std::nullopt;
  signalfd_siginfo si{};
  if (::read(fd_.get(), &si, sizeof si) != sizeof si) return std::nullopt;
  return static_cast<int>(si.ssi_signo);
}

Child::Child(const SysRoot& root, SignalScope signals)
    : root_(&root), signals_(std::move(signals)) {
  kill_pidfds_.reserve(kMaxReleasePidfds);
}

Child::Child(Child&& other) noexcept
    : root_(other.root_),
      signals_(std::move(other.signals_)),
      cgroup_(std::move(other.cgroup_)),
      pidfd_(std::move(other.pidfd_)),
      pid_(other.pid_),
      anchor_(other.anchor_),
      attached_(other.attached_),
      status_(other.status_),
      kill_pidfds_(std::move(other.kill_pidfds_)),
      known_(std::move(other.known_)),
      spare_(std::move(other.spare_)),
      spare_count_(other.spare_count_) {
  other.cgroup_.reset();
  other.pid_ = 0;
}

Child::~Child() {
  if (pid_ > 0 && !attached_ && !status_) {
    // Never reaped (an error path): do not leave the job running, nor a zombie.
    if (pidfd_.get() >= 0) {
      PidfdSendSignal(pidfd_.get(), SIGKILL);
    } else {
      ::kill(pid_, SIGKILL);
    }
    ::waitpid(pid_, nullptr, 0);
  }
  for (int fd : kill_pidfds_) ::close(fd);
}

Result<Child> Child::Spawn(const SysRoot& root, ChildSpec spec) {
  Child child(root, SignalScope());
  if (spec.cgroup) child.cgroup_.emplace(std::move(*spec.cgroup));
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return ErrnoError("pipe");
  FileFd err_read(pipe_fds[0]), err_write(pipe_fds[1]);

  // Everything the child needs, prepared before the fork.
  std::vector<std::string> env_strings = spec.extra_env;
  std::vector<char*> argv;
  for (const auto& a : spec.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::string adj = fmt::format("{}", spec.oom_score_adj);
  const std::string procs = child.cgroup_ ? child.cgroup_->procs_path() : "";
  const std::string adj_path = root.Path("proc/self/oom_score_adj").string();
  const sigset_t& old_mask = child.signals_.old_mask();
  const pid_t guard_pid = ::getpid();

  const pid_t pid = ::fork();
  if (pid < 0) return ErrnoError("fork");
  if (pid == 0) {
    ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    // The job starts with SIGPIPE at its default action, whatever the guard set for itself.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGPIPE, &dfl, nullptr);
    ::setsid();  // own session and process group
    if (spec.kill_with_guard) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != guard_pid) ::_exit(127);  // the guard died before prctl
    }
    if (spec.stdout_fd >= 0) ::dup2(spec.stdout_fd, STDOUT_FILENO);
    if (spec.stderr_fd >= 0) ::dup2(spec.stderr_fd, STDERR_FILENO);
    if (!procs.empty()) WriteFileQuietly(procs, "0");
    WriteFileQuietly(adj_path, adj);
    if (spec.nice) ::setpriority(PRIO_PROCESS, 0, *spec.nice);
    for (auto& e : env_strings) ::putenv(e.data());
    ::execvp(argv[0], argv.data());
    const int e = errno;
    [[maybe_unused]] ssize_t n = ::write(err_write.get(), &e, sizeof e);
    ::_exit(127);
  }
  child.pid_ = pid;
  child.anchor_ = guard_pid;
  child.pidfd_.reset(PidfdOpen(pid));  // not reaped yet: this PID is still ours
  err_write.reset();
  int exec_errno = 0;
  if (::read(err_read.get(), &exec_errno, sizeof exec_errno) == sizeof exec_errno) {
    // The destructor reaps the child (it has exited 127 already).
    return Error{std::string(kChildExecFailed), exec_errno};
  }
  return child;
}

Result<Child> Child::Attach(const SysRoot& root, pid_t pid) {
  const auto stat = ReadProcStat(root, pid);
  if (!stat) return Error{"no such process", ESRCH};
  auto fd = OpenVerifiedPidfd(root, pid, stat->starttime_ticks);
  if (!fd) return Error{"pidfd_open", errno};
  Child child(root, SignalScope());
  child.pidfd_.reset(*fd);
  child.pid_ = pid;
  child.anchor_ = pid;
  child.attached_ = true;
  return child;
}

bool Child::alive() const {
  // Without a pidfd (kernels before 5.3) the job counts as alive while its stat is readable.
  if (pidfd_.get() < 0) {
    const auto s = ReadProcStat(*root_, pid_);
    return s && s->state != 'Z' && s->state != 'X';
  }
  pollfd p{pidfd_.get(), POLLIN, 0};
  return ::poll(&p, 1, 0) == 0;
}

bool Child::running() const { return attached_ ? alive() : !status_.has_value(); }

size_t Child::ReserveDescriptors(size_t count) {
  spare_count_ = count;
  RefillSpares();
  return spare_.size();
}

void Child::RefillSpares() const {
  while (spare_.size() < spare_count_) {
    FileFd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) break;
    spare_.push_back(std::move(fd));
  }
}

std::vector<ProcStat> Child::Members() const {
  const SpareScope spares(*this);
  std::vector<ProcStat> out;
  const pid_t self = ::getpid();
  auto listed = [&](pid_t pid) {
    return std::any_of(out.begin(), out.end(), [&](const ProcStat& p) { return p.pid == pid; });
  };
  for (auto& d : Descendants(*root_, anchor_)) {
    if (d.state != 'Z' && d.state != 'X' && d.pid != self) out.push_back(d);
  }
  if (attached_ && alive()) {
    if (auto s = ReadProcStat(*root_, pid_)) out.push_back(*s);
  }
  for (const Known& k : known_) {
    pollfd p{k.pidfd.get(), POLLIN, 0};
    if (listed(k.stat.pid) || ::poll(&p, 1, 0) != 0) continue;  // listed, or exited
    if (auto s = ReadProcStat(*root_, k.stat.pid); s && s->state != 'Z' && s->state != 'X') {
      out.push_back(*s);
    }
  }
  if (cgroup_) {
    for (pid_t pid : cgroup_->Pids()) {
      if (!listed(pid) && pid != self) {
        if (auto s = ReadProcStat(*root_, pid); s && s->state != 'Z') out.push_back(*s);
      }
    }
  }
  return out;
}

int Child::Signal(int sig) { return SignalOnly(sig, {}); }

int Child::SignalOnly(int sig, const std::function<bool(const ProcStat&)>& only) {
  const SpareScope spares(*this);  // declared first: refilled once the targets are closed
  // The whole tree first, each member by a verified pidfd; only then any signal.
  std::vector<FileFd> targets;
  int n = 0;
  auto send = [&] {
    for (FileFd& fd : targets) {
      if (PidfdSendSignal(fd.get(), sig) == 0) ++n;
      if (sig == SIGKILL && kill_pidfds_.size() < kMaxReleasePidfds)
        kill_pidfds_.push_back(fd.release());
    }
    targets.clear();
  };
  bool job_too = !only;
  for (const ProcStat& m : Members()) {
    if (only && !only(m)) continue;
    if (m.pid == pid_ && pidfd_.get() >= 0) {
      job_too = true;
      continue;  // signalled through its own pidfd below
    }
    auto fd = OpenVerifiedPidfd(*root_, m.pid, m.starttime_ticks);
    if (!fd && (errno == EMFILE || errno == ENFILE) && !targets.empty()) {
      send();  // out of descriptors: this batch now, its pidfds closed, then the rest
      fd = OpenVerifiedPidfd(*root_, m.pid, m.starttime_ticks);
    }
    if (!fd) continue;
    if (attached_ && std::none_of(known_.begin(), known_.end(), [&](const Known& k) {
          return k.stat.pid == m.pid && k.stat.starttime_ticks == m.starttime_ticks;
        })) {
      known_.push_back({m, FileFd(::fcntl(*fd, F_DUPFD_CLOEXEC, 0))});
    }
    targets.emplace_back(*fd);
  }
  if (sig == SIGKILL && !only && cgroup_ && cgroup_->is_v2()) cgroup_->KillAll(*root_);
  if (job_too && alive() && PidfdSendSignal(pidfd_.get(), sig) == 0) ++n;
  send();
  if (sig == SIGKILL && !only && cgroup_ && !cgroup_->is_v2()) cgroup_->KillAll(*root_);
  return n;
}

void Child::ReleaseMemoryInBackground() {
  // The kernel frees the address spaces at once instead of waiting for each exit. Errors
  // are ignored (EINVAL before 5.15, ESRCH once gone). The thread owns its descriptors.
  std::vector<int> fds;
  fds.swap(kill_pidfds_);
  kill_pidfds_.reserve(kMaxReleasePidfds);
  const int job_fd = pidfd_.get() >= 0 ? ::fcntl(pidfd_.get(), F_DUPFD_CLOEXEC, 0) : -1;
  std::thread([fds = std::move(fds), job_fd]() {
    if (job_fd >= 0) {
      ProcessMrelease(job_fd);
      ::close(job_fd);
    }
    for (int fd : fds) {
      ProcessMrelease(fd);
      ::close(fd);
    }
  }).detach();
}

uint64_t Child::RssBytes() const {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  uint64_t total = 0;
  auto linked = DescendantsByChildLinks(*root_, anchor_);
  for (const ProcStat& m : linked ? *linked : Members()) total += m.rss_pages * page;
  if (attached_ && linked) {
    if (auto s = ReadProcStat(*root_, pid_)) total += s->rss_pages * page;
  }
  return total;
}

}  // namespace headroom
