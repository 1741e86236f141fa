// Implementation notes.
//  - Signal: MemAvailable from a /proc/meminfo descriptor opened once and re-read with
//    pread into a fixed buffer (about 5 us; no allocation). Swap is ignored: GPU driver
//    pages on GB10 are unswappable, and MemAvailable does not count swap anyway.
//  - Period: 10 ms near the level (within twice it), when memory falls faster than 1 GB/s,
//    or once triggered; otherwise the time a 20 GB/s fill would need to reach the level,
//    clamped to 10-100 ms (guard_peers.md section 6: a 10 ms poller fired 2-14 ms after the
//    crossing at up to 20 GB/s; earlyoom's sleep assumes at most 6 GB/s).
//  - Projection: an EWMA of the fall rate (alpha 0.5, so two samples dominate); when the
//    projected time to the level is under two periods the guard acts before the crossing.
//  - The guard waits in poll() on a signalfd (SIGCHLD, INT, TERM, HUP) and the PSI trigger
//    descriptors, with the period as the timeout: one wakeup per period, no spinning.
//  - The tree: the guard is the job's child subreaper, so descendants that setsid or
//    double-fork are re-parented to it and stay visible; the job's cgroup (where one could
//    be made) catches everything else. Signals go through pidfds opened from a PID and
//    re-validated by the process start time, never through a bare PID.
//  - Success is an empty tree, not recovered memory: GB10 drivers keep freed memory in
//    pools for a while. Both are reported.
#include "run/guard.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>

#include "base/bytes.h"
#include "base/i18n.h"
#include "base/messages.h"
#include "run/job_cgroup.h"
#include "run/pidfd.h"
#include "sys/meminfo.h"
#include "sys/pool_holders.h"
#include "sys/processes.h"
#include "sys/zoneinfo.h"

extern char** environ;

namespace headroom {
namespace {

constexpr double kAssumedFillBytesPerSecond = 20e9;
constexpr double kFastFallBytesPerSecond = 1e9;
constexpr int kMinPeriodMs = 10;
constexpr int kMaxPeriodMs = 100;
// Summing the tree's RSS walks all of /proc (about 10 us per process): every 250 ms near
// the level, every 2 s far from it, where idle CPU matters more than a finer peak.
constexpr double kRssSampleNearSeconds = 0.25;
constexpr double kRssSampleFarSeconds = 2.0;

double MonoSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::string WallTime() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm t{};
  gmtime_r(&ts.tv_sec, &t);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", t.tm_year + 1900, t.tm_mon + 1,
                     t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, ts.tv_nsec / 1000000);
}

// MemAvailable through a kept-open descriptor.
class AvailableReader {
 public:
  explicit AvailableReader(int fd) : fd_(fd) {}
  std::optional<uint64_t> Read() {
    const ssize_t n = ::pread(fd_, buf_, sizeof buf_, 0);
    if (n <= 0) return std::nullopt;
    return ParseMemAvailableFast(std::string_view(buf_, static_cast<size_t>(n)));
  }

 private:
  int fd_;
  char buf_[16384];
};

// Opens a PSI trigger (Documentation/accounting/psi.rst): "<some|full> <stall us> <window
// us>". A 1 s window needs CAP_SYS_RESOURCE; unprivileged triggers take 2 s windows.
int OpenPsiTrigger(const SysRoot& root, const char* kind, int stall_ms, bool* unprivileged_window) {
  const std::string path = root.Path("proc/pressure/memory").string();
  for (int window_ms : {1000, 2000}) {
    const int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return -1;
    const std::string spec =
        fmt::format("{} {} {}", kind, stall_ms * 1000 * window_ms / 1000, window_ms * 1000);
    if (::write(fd, spec.c_str(), spec.size() + 1) >= 0) {
      if (window_ms != 1000) *unprivileged_window = true;
      return fd;
    }
    ::close(fd);
  }
  return -1;
}

// The job as the guard knows it: the direct child (or the attached PID) and everything
// below it.
class JobTree {
 public:
  JobTree(const SysRoot& root, pid_t anchor, pid_t job, int job_pidfd, JobCgroup* cgroup,
          bool anchor_is_guard)
      : root_(root),
        anchor_(anchor),
        job_(job),
        job_pidfd_(job_pidfd),
        cgroup_(cgroup),
        anchor_is_guard_(anchor_is_guard) {
    kill_pidfds_.reserve(256);
  }

  // Live members (zombies excluded), from the process tree and the cgroup.
  std::vector<ProcStat> Members() const {
    std::vector<ProcStat> out;
    for (auto& d : Descendants(root_, anchor_)) {
      if (d.state != 'Z' && d.state != 'X') out.push_back(d);
    }
    if (!anchor_is_guard_ && job_alive()) {
      if (auto s = ReadProcStat(root_, job_)) out.push_back(*s);
    }
    if (cgroup_) {
      for (pid_t pid : cgroup_->Pids()) {
        if (std::none_of(out.begin(), out.end(), [&](const ProcStat& p) { return p.pid == pid; })) {
          if (auto s = ReadProcStat(root_, pid); s && s->state != 'Z') out.push_back(*s);
        }
      }
    }
    return out;
  }

  // Without a pidfd (kernels before 5.3) the job counts as alive while its stat is readable.
  bool job_alive() const {
    if (job_pidfd_ < 0) {
      const auto s = ReadProcStat(root_, job_);
      return s && s->state != 'Z' && s->state != 'X';
    }
    pollfd p{job_pidfd_, POLLIN, 0};
    return ::poll(&p, 1, 0) == 0;
  }

  // Sends `sig` to every member; returns how many were signalled.
  int Signal(int sig) {
    int n = 0;
    if (sig == SIGKILL && cgroup_ && cgroup_->is_v2()) cgroup_->KillAll(root_);
    if (job_alive() && PidfdSendSignal(job_pidfd_, sig) == 0) ++n;
    for (const ProcStat& m : Members()) {
      if (m.pid == job_ && job_pidfd_ >= 0) continue;  // signalled through its own pidfd above
      auto fd = OpenVerifiedPidfd(root_, m.pid, m.starttime_ticks);
      if (!fd) continue;
      if (PidfdSendSignal(*fd, sig) == 0) ++n;
      if (sig == SIGKILL && kill_pidfds_.size() < kill_pidfds_.capacity()) {
        kill_pidfds_.push_back(*fd);
      } else {
        ::close(*fd);
      }
    }
    if (sig == SIGKILL && cgroup_ && !cgroup_->is_v2()) cgroup_->KillAll(root_);
    return n;
  }

  // process_mrelease on what was just SIGKILLed, off the watch thread; the kernel frees
  // the address spaces at once instead of waiting for each exit. Errors are ignored
  // (EINVAL before 5.15, ESRCH once gone).
  void ReleaseMemoryInBackground() {
    std::vector<int> fds;
    fds.swap(kill_pidfds_);
    kill_pidfds_.reserve(256);
    const int job_fd = ::dup(job_pidfd_);
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

  // The tree's RSS through the child links (cheap: only the tree's files); the full scan
  // where the kernel has no children files.
  uint64_t RssBytes() const {
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    uint64_t total = 0;
    auto linked = DescendantsByChildLinks(root_, anchor_);
    for (const ProcStat& m : linked ? *linked : Members()) total += m.rss_pages * page;
    if (!anchor_is_guard_ && linked) {
      if (auto s = ReadProcStat(root_, job_)) total += s->rss_pages * page;
    }
    return total;
  }

 private:
  const SysRoot& root_;
  pid_t anchor_;
  pid_t job_;
  int job_pidfd_;
  JobCgroup* cgroup_;
  bool anchor_is_guard_;
  std::vector<int> kill_pidfds_;
};

// A note in English (events, the journal) and in the user's language (the terminal).
template <typename... Args>
void AddNote(GuardSummary& sum, fmt::format_string<const Args&...> text, const Args&... args) {
  TextPair note = TrPair(text, args...);
  sum.notes.push_back(std::move(note.english));
  sum.shown_notes.push_back(std::move(note.shown));
}

void WriteFileQuietly(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  [[maybe_unused]] ssize_t n = ::write(fd, text.data(), text.size());
  ::close(fd);
}

}  // namespace

void GuardEvents::Emit(const char* type, const std::string& fields) {
  if (!file_) return;
  std::fprintf(file_, "{\"type\":\"%s\",\"wall_time\":\"%s\",\"monotonic_s\":%.6f%s%s}\n", type,
               WallTime().c_str(), MonoSeconds(), fields.empty() ? "" : ",", fields.c_str());
  std::fflush(file_);
}

Result<GuardSummary> RunGuard(const SysRoot& root, const GuardOptions& opt, GuardEvents& events,
                              std::FILE* progress) {
  GuardSummary sum;
  const std::string meminfo_path = root.Path("proc/meminfo").string();
  const int meminfo_fd = ::open(meminfo_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (meminfo_fd < 0) return ErrnoError("cannot open " + meminfo_path);
  AvailableReader reader(meminfo_fd);
  {
    auto info = ReadMemInfo(root);
    if (info) sum.mem_total_bytes = info->total_bytes().value_or(0);
  }
  const auto first = reader.Read();
  if (!first) {
    ::close(meminfo_fd);
    return Error{meminfo_path + ": no MemAvailable line (kernel before 3.14?); the guard needs it"};
  }
  sum.start_available_bytes = sum.lowest_available_bytes = *first;
  std::optional<PerCpuFreeReader> per_cpu;
  if (opt.count_per_cpu_free) {
    per_cpu.emplace(root);
    if (auto pcp = per_cpu->ReadBytes()) {
      sum.start_effective_available_bytes = sum.lowest_effective_available_bytes = *first + *pcp;
    } else {
      per_cpu.reset();
      AddNote(sum, N_("proc/zoneinfo has no per-CPU lists: the peak is from MemAvailable alone"));
    }
  }

  // Self-protection: each privilege it lacks is a note, never a failure.
#ifdef MCL_ONFAULT
  const int lock_flags = MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT;
#else
  const int lock_flags = MCL_CURRENT | MCL_FUTURE;
#endif
  if (::mlockall(lock_flags) != 0) {
    AddNote(sum, N_("mlockall: {} (the guard's pages may be reclaimed)"), ErrnoText{errno});
  }
  if (::setpriority(PRIO_PROCESS, 0, -10) != 0) {
    AddNote(sum, N_("nice -10: {} (the watch loop runs at normal priority)"), ErrnoText{errno});
  }
  {
    const std::string adj = root.Path("proc/self/oom_score_adj").string();
    const int fd = ::open(adj.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ::write(fd, "-500", 4) != 4) {
      AddNote(sum, N_("oom_score_adj -500 for the guard: not permitted"));
    }
    if (fd >= 0) ::close(fd);
  }

  // Signals arrive through a signalfd, read in the poll loop.
  sigset_t mask, old_mask;
  sigemptyset(&mask);
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&mask, s);
  ::sigprocmask(SIG_BLOCK, &mask, &old_mask);
  const int sig_fd = ::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

  std::optional<JobCgroup> cgroup;
  pid_t job = 0;
  int job_pidfd = -1;
  const bool attach = opt.attach_pid.has_value();
  if (attach) {
    job = *opt.attach_pid;
    const auto stat = ReadProcStat(root, job);
    auto fd = stat ? OpenVerifiedPidfd(root, job, stat->starttime_ticks) : std::nullopt;
    if (!fd) {
      ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
      ::close(meminfo_fd);
      if (sig_fd >= 0) ::close(sig_fd);
      return Error{TrFormat("--pid {}: no such process (or not permitted)", job)};
    }
    job_pidfd = *fd;
    sum.cgroup = "none (--pid: the process was started elsewhere)";
    AddNote(sum, N_("--pid: descendants that re-parent away from the process (setsid and "
                    "double fork) cannot be followed; run the job under the guard for that"));
  } else {
    if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
      AddNote(sum, N_("child subreaper: {}"), ErrnoText{errno});
    }
    if (opt.use_cgroup) {
      // Its error text becomes sum.cgroup and a note, both data: read in English (strerror
      // included, which glibc would otherwise translate).
      auto cg = [&] {
        const UntranslatedScope english;
        return JobCgroup::Create(root, fmt::format("headroom-guard-{}", ::getpid()));
      }();
      if (cg) {
        cgroup.emplace(std::move(*cg));
        sum.cgroup = (cgroup->is_v2() ? "cgroup v2 " : "cgroup v1 memory ") + cgroup->dir();
      } else {
        sum.cgroup = cg.error().message;
        // The cgroup's error text is data (the events' "cgroup" field): English.
        AddNote(sum, N_("{}; the kill walks the process tree instead"), cg.error().message);
      }
    } else {
      sum.cgroup = "none (--no-cgroup)";
    }
    // exec errors come back through a close-on-exec pipe.
    int err_pipe[2];
    if (::pipe2(err_pipe, O_CLOEXEC) != 0) return ErrnoError("pipe");
    std::vector<std::string> env_strings = opt.extra_env;
    std::vector<char*> argv;
    for (const auto& a : opt.command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const std::string adj = fmt::format("{}", opt.job_oom_score_adj);
    const std::string procs = cgroup ? cgroup->procs_path() : "";
    const std::string adj_path = root.Path("proc/self/oom_score_adj").string();
    const bool kill_with_guard = opt.kill_with_guard;
    const pid_t guard_pid = ::getpid();
    job = ::fork();
    if (job < 0) return ErrnoError("fork");
    if (job == 0) {
      ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
      ::setsid();  // own session and process group
      if (kill_with_guard) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != guard_pid) ::_exit(127);  // the guard died before prctl
      }
      if (opt.stdout_fd >= 0) ::dup2(opt.stdout_fd, STDOUT_FILENO);
      if (opt.stderr_fd >= 0) ::dup2(opt.stderr_fd, STDERR_FILENO);
      if (!procs.empty()) WriteFileQuietly(procs, "0");
      WriteFileQuietly(adj_path, adj);
      for (auto& e : env_strings) ::putenv(e.data());
      ::execvp(argv[0], argv.data());
      const int e = errno;
      [[maybe_unused]] ssize_t n = ::write(err_pipe[1], &e, sizeof e);
      ::_exit(127);
    }
    ::close(err_pipe[1]);
    job_pidfd = PidfdOpen(job);  // the child is not reaped yet: this pid is still ours
    int exec_errno = 0;
    if (::read(err_pipe[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno) {
      ::close(err_pipe[0]);
      ::waitpid(job, nullptr, 0);
      ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
      ::close(meminfo_fd);
      if (sig_fd >= 0) ::close(sig_fd);
      if (job_pidfd >= 0) ::close(job_pidfd);
      return Error{TrFormat("cannot run {}: {}", opt.command[0], std::strerror(exec_errno))};
    }
    ::close(err_pipe[0]);
  }
  JobTree tree(root, attach ? job : ::getpid(), job, job_pidfd, cgroup ? &*cgroup : nullptr,
               !attach);

  // PSI: thrashing as an event, and with --psi-kill sustained full pressure as a reason.
  bool psi_unprivileged = false;
  const int psi_some = OpenPsiTrigger(root, "some", 150, &psi_unprivileged);
  const int psi_full = opt.psi_kill ? OpenPsiTrigger(root, "full", 500, &psi_unprivileged) : -1;
  if (psi_some < 0) {
    AddNote(sum,
            N_("no PSI trigger on proc/pressure/memory (kernel without PSI or not permitted)"));
  }
  if (psi_unprivileged)
    AddNote(sum, N_("PSI trigger uses the unprivileged 2 s window (no CAP_SYS_RESOURCE)"));
  if (opt.psi_kill && psi_full < 0)
    AddNote(sum, N_("--psi-kill: no full-pressure trigger could be set"));

  const double start = MonoSeconds();
  events.Emit("start", fmt::format("\"pid\":{},\"available_bytes\":{},\"kill_below_bytes\":{},"
                                   "\"warn_below_bytes\":{},\"cgroup\":\"{}\"",
                                   job, *first, opt.min_available_bytes, opt.warn_available_bytes,
                                   sum.cgroup.substr(0, 200)));
  for (const auto& n : sum.notes) events.Emit("note", fmt::format("\"text\":\"{}\"", n));

  uint64_t last_available = *first;
  double last_t = start;
  double rate = 0;  // bytes per second falling (EWMA)
  bool warned = false;
  bool triggered = false, killed_hard = false, cleanup = false;
  double crossing_t = 0, deadline = 0, last_rss_t = -1, last_tick_t = start;
  const double max_period_ms =
      static_cast<double>(std::max<int64_t>(opt.max_period.count(), kMinPeriodMs));
  const double timeout_s = opt.timeout ? std::chrono::duration<double>(*opt.timeout).count() : 0;
  const double tick_s = std::chrono::duration<double>(opt.tick_period).count();
  int period_ms = kMinPeriodMs;
  std::optional<int> job_status;

  for (;;) {
    pollfd fds[3] = {{sig_fd, POLLIN, 0}, {psi_some, POLLPRI, 0}, {psi_full, POLLPRI, 0}};
    ::poll(fds, 3, period_ms);
    const double now = MonoSeconds();
    // Signals: reap children, forward INT/TERM/HUP to the job.
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo si{};
      while (::read(sig_fd, &si, sizeof si) == sizeof si) {
        const int s = static_cast<int>(si.ssi_signo);
        if (s == SIGCHLD) continue;
        if (!sum.forwarded_signal) sum.forwarded_signal = s;
        const int n = tree.Signal(s);
        events.Emit("forward", fmt::format("\"signal\":{},\"processes\":{}", s, n));
      }
    }
    for (;;) {
      // wait4: each reaped process's own peak RSS comes with it (ru_maxrss, KiB), exact
      // where the sampled tree sum below can miss a short peak.
      int status = 0;
      rusage usage{};
      const pid_t p = ::wait4(-1, &status, WNOHANG, &usage);
      if (p <= 0) break;
      if (p == job && !attach) job_status = status;
      sum.peak_tree_rss_bytes =
          std::max(sum.peak_tree_rss_bytes, static_cast<uint64_t>(usage.ru_maxrss) * 1024);
    }
    if (fds[1].revents & POLLPRI)
      events.Emit("pressure", "\"kind\":\"some\",\"stall_ms_per_s\":150");
    const bool psi_trigger = (fds[2].revents & POLLPRI) != 0;

    const auto reading = reader.Read();
    ++sum.polls;
    const uint64_t available = reading.value_or(last_available);
    sum.lowest_available_bytes = std::min(sum.lowest_available_bytes, available);
    if (per_cpu && reading) {
      if (auto pcp = per_cpu->ReadBytes()) {
        sum.lowest_effective_available_bytes =
            std::min(*sum.lowest_effective_available_bytes, available + *pcp);
      }
    }
    const double dt = now - last_t;
    if (dt > 0) {
      const double inst =
          (static_cast<double>(last_available) - static_cast<double>(available)) / dt;
      rate = 0.5 * rate + 0.5 * inst;
    }
    last_available = available;
    last_t = now;

    if (opt.warn_available_bytes && available < opt.warn_available_bytes && !warned) {
      warned = true;
      ++sum.warnings;
      events.Emit("warn", fmt::format("\"available_bytes\":{},\"warn_below_bytes\":{}", available,
                                      opt.warn_available_bytes));
      if (progress) {
        std::fprintf(progress, "%s\n",
                     TrFormat("headroom guard: warning: MemAvailable {:.2f} GiB is below the "
                              "warning level {:.2f} GiB",
                              static_cast<double>(available) / (1 << 30),
                              static_cast<double>(opt.warn_available_bytes) / (1 << 30))
                         .c_str());
      }
    } else if (available >= opt.warn_available_bytes) {
      warned = false;
    }

    const bool job_running = attach ? tree.job_alive() : !job_status.has_value();
    if (!triggered && job_running) {
      const double level = static_cast<double>(opt.min_available_bytes);
      const double headroom = static_cast<double>(available) - level;
      const char* reason = nullptr;
      if (available < opt.min_available_bytes)
        reason = "memavailable";
      else if (rate > 0 && headroom / rate < 2.0 * period_ms / 1000.0)
        reason = "projected";
      else if (psi_trigger)
        reason = "psi";
      if (reason) {
        triggered = true;
        sum.killed = true;
        sum.kill_reason = reason;
        sum.trigger_available_bytes = available;
        crossing_t = now;
        const bool severe = available < opt.min_available_bytes / 2 ||
                            (rate > 0 && static_cast<double>(available) / rate <
                                             std::chrono::duration<double>(opt.grace).count());
        const int sig = severe ? SIGKILL : SIGTERM;
        const int n = tree.Signal(sig);
        killed_hard = severe;
        sum.signal_path = severe ? "SIGKILL at once" : "SIGTERM";
        sum.crossing_to_signal_ms = (MonoSeconds() - crossing_t) * 1000;
        if (severe) tree.ReleaseMemoryInBackground();
        deadline = now + std::chrono::duration<double>(opt.grace).count();
        events.Emit("trigger",
                    fmt::format("\"reason\":\"{}\",\"available_bytes\":{},\"kill_below_bytes\":{},"
                                "\"fall_rate_bytes_per_s\":{:.0f}",
                                reason, available, opt.min_available_bytes, rate));
        events.Emit(severe ? "kill" : "term", fmt::format("\"processes\":{}", n));
      }
    }
    // The trial timeout of a sweep: the same path as a kill, without a memory reason.
    if (opt.timeout && !triggered && !sum.timed_out && job_running && now - start >= timeout_s) {
      sum.timed_out = true;
      cleanup = true;
      const int n = tree.Signal(SIGTERM);
      deadline = now + std::chrono::duration<double>(opt.grace).count();
      events.Emit("timeout", fmt::format("\"after_s\":{:.3f},\"processes\":{}", now - start, n));
    }
    if (opt.on_tick && now - last_tick_t >= tick_s) {
      last_tick_t = now;
      opt.on_tick(available, now - start);
    }
    // Escalation: on time, or at once when memory keeps falling below half the level.
    if ((triggered || cleanup) && !killed_hard &&
        (now >= deadline || (triggered && available < opt.min_available_bytes / 2))) {
      const int n = tree.Signal(SIGKILL);
      killed_hard = true;
      tree.ReleaseMemoryInBackground();
      if (triggered) sum.signal_path = "SIGTERM, SIGKILL after grace";
      events.Emit("kill",
                  fmt::format("\"processes\":{},\"after_term_s\":{:.3f}", n,
                              now - (deadline - std::chrono::duration<double>(opt.grace).count())));
    }
    const bool near = available < 2 * opt.min_available_bytes || rate > kFastFallBytesPerSecond;
    if (now - last_rss_t >= (near || triggered ? kRssSampleNearSeconds : kRssSampleFarSeconds)) {
      last_rss_t = now;
      sum.peak_tree_rss_bytes = std::max(sum.peak_tree_rss_bytes, tree.RssBytes());
    }
    // The end: the job is gone and nothing of its tree is left.
    if (!job_running) {
      const auto members = tree.Members();
      if (members.empty()) break;
      if (!triggered && !cleanup) {
        // The job exited and left processes behind (data-loader workers, daemons): they
        // belong to the job and hold the pool, so they go too.
        cleanup = true;
        const int n = tree.Signal(SIGTERM);
        deadline = now + std::chrono::duration<double>(opt.grace).count();
        events.Emit("cleanup", fmt::format("\"processes\":{}", n));
      }
    }
    // Next period.
    if (triggered || cleanup || rate > kFastFallBytesPerSecond ||
        available < 2 * opt.min_available_bytes) {
      period_ms = kMinPeriodMs;
    } else {
      const double to_level_s =
          (static_cast<double>(available) - static_cast<double>(opt.min_available_bytes)) /
          kAssumedFillBytesPerSecond;
      period_ms = std::clamp(static_cast<int>(to_level_s * 1000), kMinPeriodMs,
                             static_cast<int>(std::min<double>(max_period_ms, kMaxPeriodMs)));
    }
  }
  const double end = MonoSeconds();
  sum.duration_s = end - start;
  if (triggered) sum.crossing_to_empty_ms = (end - crossing_t) * 1000;
  sum.available_after_bytes = reader.Read();
  sum.peak_pool_use_bytes = sum.mem_total_bytes > sum.lowest_available_bytes
                                ? sum.mem_total_bytes - sum.lowest_available_bytes
                                : 0;
  if (cgroup) sum.cgroup_peak_bytes = cgroup->PeakBytes();
  if (job_status) {
    if (WIFEXITED(*job_status)) sum.job_exit_code = WEXITSTATUS(*job_status);
    if (WIFSIGNALED(*job_status)) sum.job_signal = WTERMSIG(*job_status);
  }
  if (sum.killed) {
    sum.exit_status = kExitGuardKilled;
  } else if (sum.job_exit_code) {
    sum.exit_status = *sum.job_exit_code;
  } else if (sum.job_signal) {
    sum.exit_status = 128 + *sum.job_signal;
  }
  events.Emit("exit",
              fmt::format("\"exit_status\":{},\"killed_by_guard\":{},\"lowest_available_bytes\":{},"
                          "\"available_after_bytes\":{}",
                          sum.exit_status, sum.killed ? "true" : "false",
                          sum.lowest_available_bytes, sum.available_after_bytes.value_or(0)));
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  for (int fd : {meminfo_fd, sig_fd, psi_some, psi_full, job_pidfd}) {
    if (fd >= 0) ::close(fd);
  }
  return sum;
}

uint64_t DefaultKillLevelBytes(uint64_t mem_total_bytes) {
  return std::max<uint64_t>(4ULL << 30, mem_total_bytes * 8 / 100);
}

void PrintLeftovers(std::FILE* out, const std::vector<Leftover>& leftovers) {
  for (const auto& l : leftovers) {
    // TRANSLATORS: one process per line: {0} pid, {1} its kind padded to 22 columns
    // ("vllm", "python+torch"), {2} its RSS, {3} its command line.
    std::fprintf(out, "%s\n",
                 TrFormat("  pid {0}  {1:<22} RSS {2}  {3}", l.pid, l.what, FormatGiB(l.rss_bytes),
                          l.cmdline)
                     .c_str());
  }
}

std::vector<Leftover> FindLeftovers(const SysRoot& root) {
  // The survey of `headroom ps` (sys/pool_holders.h), narrowed to the kinds this list has
  // always had: a refusal lists them and `sweep --kill-leftovers` signals them, so a new
  // kind here would widen what a sweep kills.
  std::vector<Leftover> out;
  for (const auto& h : FindPoolHolders(root, std::nullopt, ::getpid())) {
    const HolderKind k = h.kind;
    if (k != HolderKind::kRayWorker && k != HolderKind::kVllm && k != HolderKind::kOllama &&
        k != HolderKind::kPythonTorch) {
      continue;
    }
    std::string line;
    for (const auto& arg : h.facts.argv) line += (line.empty() ? "" : " ") + arg;
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out.push_back({h.facts.pid, std::string(HolderKindName(k)), line.substr(0, 200),
                   h.facts.rss_bytes.value_or(0)});
  }
  return out;
}

}  // namespace headroom
