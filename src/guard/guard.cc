// Implementation notes.
//  - Signal: MemAvailable from a /proc/meminfo descriptor opened once and re-read with
//    pread into a fixed buffer (about 5 us; no allocation). Swap is ignored: GPU driver
//    pages on GB10 are unswappable, and MemAvailable does not count swap anyway.
//  - The loop is read, decide, act, record (GuardLoop::Step, one wakeup): the decisions
//    (reason, signal, escalation, every deadline, the group's workers-first steps, the period:
//    10 ms near the level, up to 1 s far from it) are guard/kill_policy.h's, the job and
//    everything it holds (pidfd, cgroup, signal mask, spare descriptors) guard/child.h's. The
//    loop's context is one object, GuardLoop, so each step takes the reading and nothing else.
//  - The guard waits in epoll_wait on a set registered once: a signalfd (SIGCHLD, the
//    signals it forwards or ignores), the PSI trigger descriptors and the job's pidfd, with
//    the period as the timeout: one wakeup per period, no spinning.
//  - The tree: the guard is the job's child subreaper, so descendants that setsid or
//    double-fork are re-parented to it and stay visible; the job's cgroup (where one could
//    be made) catches everything else. Signals go through pidfds opened from a PID and
//    re-validated by the process start time, never through a bare PID.
//  - Success is an empty tree, not recovered memory: GB10 drivers keep freed memory in
//    pools for a while. Both are reported.
#include "guard/guard.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "base/bytes.h"
#include "base/clock.h"
#include "base/json_null.h"
#include "base/json_reader.h"
#include "base/message.h"
#include "base/text.h"
#include "base/wall_time.h"
#include "guard/child.h"
#include "guard/guard_group.h"
#include "guard/job_cgroup.h"
#include "guard/kill_line.h"
#include "guard/kill_policy.h"
#include "guard/torchelastic.h"
#include "samples/companion_records.h"
#include "sys/meminfo.h"
#include "sys/memory_lock.h"
#include "sys/pool_holders.h"
#include "sys/process_survey.h"
#include "sys/processes.h"
#include "sys/zoneinfo.h"

namespace headroom {
namespace {

// Summing the tree's RSS walks the tree's /proc files (about 10 us per process): every
// 250 ms near the level, every 60 s far from it, where idle CPU matters more than a finer
// peak (far from the level the pool is not the tree's to fill; the exit's rusage adds each
// reaped process's own peak). At 10 s it was a sixth of an idle guard's CPU, the part that
// kept it above earlyoom's (docs/guard-benchmark.md, 2026-12-02).
constexpr double kRssSampleNearSeconds = 0.25;
constexpr double kRssSampleFarSeconds = 60.0;

// Descriptors held for the kill path (guard/child.h ReserveDescriptors): the /proc walk takes
// two or three at a time, a signal one pidfd per member; a larger tree goes in batches.
constexpr size_t kKillPathSpareDescriptors = 64;

double MonoSeconds() { return ClockSeconds(CLOCK_MONOTONIC); }

// MemAvailable through a kept-open descriptor.
class AvailableReader {
 public:
  explicit AvailableReader(FileFd fd) : fd_(std::move(fd)) {}
  std::optional<uint64_t> Read() {
    const ssize_t n = ::pread(fd_.get(), buf_, sizeof buf_, 0);
    if (n <= 0) return std::nullopt;
    return ParseMemAvailableFast(std::string_view(buf_, static_cast<size_t>(n)));
  }

 private:
  FileFd fd_;
  char buf_[16384];
};

// The descriptors the guard waits on (the signalfd, the PSI triggers, the job's pidfd),
// registered once in an epoll set: an idle wakeup is one epoll_wait and one pread, without a
// poll's registration and removal of every descriptor at every call, the larger part of an
// idle wakeup's kernel time on this project's VM (docs/guard-benchmark.md). Without epoll
// (it cannot fail short of running out of descriptors) it polls the same descriptors.
class WakeSet {
 public:
  enum Slot : uint32_t { kSignals = 1, kPsiSome = 2, kPsiFull = 4, kJob = 8, kGroup = 16 };
  WakeSet(int signal_fd, int some_fd, int full_fd, int job_fd, int group_fd)
      : ep_(::epoll_create1(EPOLL_CLOEXEC)),
        fds_{{{signal_fd, POLLIN, 0},
              {some_fd, POLLPRI, 0},
              {full_fd, POLLPRI, 0},
              {job_fd, POLLIN, 0},
              {group_fd, POLLIN, 0}}} {
    for (uint32_t i = 0; i < fds_.size(); ++i) Add(i);
  }
  // The job's own process exited: its pidfd stays readable, so it leaves the set.
  void DropJob() {
    if (fds_[3].fd < 0) return;
    if (ep_.get() >= 0) ::epoll_ctl(ep_.get(), EPOLL_CTL_DEL, fds_[3].fd, nullptr);
    fds_[3].fd = -1;
  }
  // Sleeps up to `timeout` or until a descriptor is ready; the ready slots.
  uint32_t Wait(std::chrono::milliseconds timeout) {
    const int ms = static_cast<int>(timeout.count());
    uint32_t ready = 0;
    if (ep_.get() >= 0) {
      epoll_event events[5];
      const int n = ::epoll_wait(ep_.get(), events, 5, ms);
      for (int i = 0; i < n; ++i) ready |= events[i].data.u32;
      return ready;
    }
    ::poll(fds_.data(), fds_.size(), ms);
    for (uint32_t i = 0; i < fds_.size(); ++i) {
      if (fds_[i].revents & fds_[i].events) ready |= 1U << i;
    }
    return ready;
  }

 private:
  void Add(uint32_t i) {
    if (ep_.get() < 0 || fds_[i].fd < 0) return;
    epoll_event e{};
    e.events = fds_[i].events == POLLPRI ? EPOLLPRI : EPOLLIN;
    e.data.u32 = 1U << i;
    ::epoll_ctl(ep_.get(), EPOLL_CTL_ADD, fds_[i].fd, &e);
  }

  FileFd ep_;
  std::array<pollfd, 5> fds_;
};

// Opens a PSI trigger (Documentation/accounting/psi.rst): "<some|full> <stall us> <window
// us>". A 1 s window needs CAP_SYS_RESOURCE; unprivileged triggers take 2 s windows.
FileFd OpenPsiTrigger(const SysRoot& root, const char* kind, int stall_ms,
                      bool* unprivileged_window) {
  const std::string path = root.Path("proc/pressure/memory").string();
  for (int window_ms : {1000, 2000}) {
    FileFd fd(::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
    if (fd.get() < 0) return fd;
    const std::string spec =
        fmt::format("{} {} {}", kind, stall_ms * 1000 * window_ms / 1000, window_ms * 1000);
    if (::write(fd.get(), spec.c_str(), spec.size() + 1) >= 0) {
      if (window_ms != 1000) *unprivileged_window = true;
      return fd;
    }
  }
  return FileFd();
}

void AddNote(GuardSummary& sum, Message note) { sum.notes.push_back(std::move(note)); }

// After a kill: the job's own peak from its companion's step records (docs/companion.md),
// where the guard knows the file and the job wrote figures to it.
std::optional<uint64_t> RecordsPeakBytes(const GuardOptions& opt) {
  if (!opt.checkpoint || opt.checkpoint->records_path.empty()) return std::nullopt;
  auto text = ReadJsonFileText(opt.checkpoint->records_path, 256ULL << 20);
  if (!text) return std::nullopt;
  const auto peak = PeakFromRecords(ParseCompanionRecords(text->text()));
  if (!peak) return std::nullopt;
  return peak->total_bytes();
}

// The nice value and oom_score_adj this process had before a guard in it raised its own: read
// at the first guard (a sweep runs many in one process, each raising its own again), so the
// job gets its caller's priority back, never the guard's (docs/guard.md, "Self-protection").
struct StartingPriority {
  std::optional<int> nice;
  std::optional<int> oom_score_adj;
};
const StartingPriority& StartingPriorityOnce(const SysRoot& root) {
  static const StartingPriority start = [&] {
    StartingPriority s;
    errno = 0;
    const int nice = ::getpriority(PRIO_PROCESS, 0);
    if (errno == 0) s.nice = nice;
    int adj = 0;
    if (auto text = root.ReadFile("proc/self/oom_score_adj", 64)) {
      const std::string_view t = TrimBlanks(*text);
      if (std::from_chars(t.data(), t.data() + t.size(), adj).ptr == t.data() + t.size())
        s.oom_score_adj = adj;
    }
    return s;
  }();
  return start;
}

// Self-protection: each privilege it lacks is a note, never a failure.
void ProtectGuard(const SysRoot& root, GuardSummary& sum) {
  StartingPriorityOnce(root);  // before the first raise
  if (const auto err = LockOwnPagesOnFault()) {
    AddNote(sum, Msg("mlockall: {} (the guard's pages may be reclaimed)", ErrnoArg{*err}));
  }
  if (::setpriority(PRIO_PROCESS, 0, -10) != 0) {
    AddNote(sum, Msg("nice -10: {} (the watch loop runs at normal priority)", ErrnoArg{errno}));
  }
  // Under --root nothing is written: the fixture's file is not this process's.
  const std::string adj = root.Path("proc/self/oom_score_adj").string();
  FileFd fd(IsLiveRoot(root) ? ::open(adj.c_str(), O_WRONLY | O_CLOEXEC) : -1);
  if (fd.get() < 0 || ::write(fd.get(), "-500", 4) != 4) {
    AddNote(sum, Msg("oom_score_adj -500 for the guard: not permitted"));
  }
}

// The job's cgroup, or none (and why, in sum.cgroup and a note).
std::optional<JobCgroup> MakeJobCgroup(const SysRoot& root, const GuardOptions& opt,
                                       GuardSummary& sum) {
  if (!opt.use_cgroup) {
    sum.cgroup = "none (--no-cgroup)";
    return std::nullopt;
  }
  // Its error text becomes sum.cgroup and a note, both data: read in English (strerror
  // included, which glibc would otherwise translate).
  auto cg = JobCgroup::Create(root, fmt::format("headroom-guard-{}", ::getpid()));
  if (!cg) {
    sum.cgroup = EnglishText(cg.error().what);
    // The cgroup's error text is data (the events' "cgroup" field): English.
    AddNote(sum, Msg("{}; the kill walks the process tree instead", cg.error().what));
    return std::nullopt;
  }
  sum.cgroup = (cg->is_v2() ? "cgroup v2 " : "cgroup v1 memory ") + cg->dir();
  return std::move(*cg);
}

// Why --pid cannot name this process, or nullopt: init, the guard itself and its ancestors
// (their tree holds the guard, so each signal it passed on would come back to it). The
// guard's own line is read from the real /proc whatever the root.
std::optional<Message> RefusedAttach(pid_t pid) {
  if (pid == 1) return Msg("--pid 1: is init; the guard does not take the whole machine");
  if (pid == ::getpid()) return Msg("--pid {}: is the guard itself", pid);
  const SysRoot real("/");
  pid_t p = ::getppid();
  for (int depth = 0; p > 1 && depth < 4096; ++depth) {
    if (p == pid)
      return Msg("--pid {}: is an ancestor of the guard (its tree holds the guard)", pid);
    const auto stat = ReadProcStat(real, p);
    if (!stat) break;
    p = stat->ppid;
  }
  return std::nullopt;
}

// The job: attached, or spawned under the guard as its child subreaper.
Result<Child> StartJob(const SysRoot& root, const GuardOptions& opt, GuardSummary& sum) {
  if (opt.attach_pid) {
    if (auto why = RefusedAttach(*opt.attach_pid)) return Error{*why};
    auto child = Child::Attach(root, *opt.attach_pid);
    if (!child) return Error{Msg("--pid {}: no such process (or not permitted)", *opt.attach_pid)};
    sum.cgroup = "none (--pid: the process was started elsewhere)";
    AddNote(sum, Msg("--pid: descendants that re-parent away from the process (setsid and "
                     "double fork) cannot be followed; run the job under the guard for that"));
    return child;
  }
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    AddNote(sum, Msg("child subreaper: {}", ErrnoArg{errno}));
  }
  ChildSpec spec;
  spec.command = opt.command;
  spec.extra_env = opt.extra_env;
  spec.stdout_fd = opt.stdout_fd;
  spec.stderr_fd = opt.stderr_fd;
  // The job's oom_score_adj is at least its caller's, and its nice value its caller's: the
  // guard's -500 and -10 are the guard's own.
  const StartingPriority& start = StartingPriorityOnce(root);
  spec.oom_score_adj = std::max(opt.job_oom_score_adj, start.oom_score_adj.value_or(-1000));
  spec.nice = start.nice;
  spec.kill_with_guard = opt.kill_with_guard;
  if (auto cgroup = MakeJobCgroup(root, opt, sum)) spec.cgroup.emplace(std::move(*cgroup));
  auto child = Child::Spawn(root, std::move(spec));
  if (!child && EnglishText(child.error().what) == kChildExecFailed) {
    return Error{Msg("cannot run {}: {}", opt.command[0], ErrnoArg{child.error().errno_value}),
                 child.error().errno_value};
  }
  return child;
}

// PSI: thrashing as an event, and with --psi-kill sustained full pressure as a reason.
struct PsiTriggers {
  FileFd some, full;
};
PsiTriggers OpenPsi(const SysRoot& root, const GuardOptions& opt, GuardSummary& sum) {
  bool unprivileged = false;
  PsiTriggers psi;
  // --root is read-only (docs/cli.md): a trigger is registered by writing the file, which
  // below a fixture tree would change the fixture, never arm a trigger.
  if (!IsLiveRoot(root)) {
    AddNote(sum, Msg("no PSI trigger: --root {} is read-only", root.root().string()));
    return psi;
  }
  psi.some = OpenPsiTrigger(root, "some", 150, &unprivileged);
  if (opt.psi_kill) psi.full = OpenPsiTrigger(root, "full", 500, &unprivileged);
  if (psi.some.get() < 0) {
    AddNote(sum,
            Msg("no PSI trigger on proc/pressure/memory (kernel without PSI or not permitted)"));
  }
  if (unprivileged)
    AddNote(sum, Msg("PSI trigger uses the unprivileged 2 s window (no CAP_SYS_RESOURCE)"));
  if (opt.psi_kill && psi.full.get() < 0)
    AddNote(sum, Msg("--psi-kill: no full-pressure trigger could be set"));
  return psi;
}

KillPolicyOptions PolicyOptions(const GuardOptions& opt) {
  KillPolicyOptions p;
  p.min_available_bytes = opt.min_available_bytes;
  p.grace = opt.grace;
  p.max_period = opt.max_period;
  p.timeout = opt.timeout;
  if (opt.on_tick) p.tick_period = opt.tick_period;
  return p;
}

// What the guard does with a signal sent to it (docs/guard.md, "Signals to the guard"):
// INT, TERM, HUP and QUIT are requests to end the job, passed on to the whole tree (a second
// one after the grace is SIGKILL, guard/kill_policy.h); USR1, USR2, ALRM and PIPE are ignored
// (their default action would end the guard and leave the job unguarded; a SIGPIPE comes from
// a write of the guard's own, whose failure is a note).
bool EndsTheJob(int sig) {
  return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT;
}

// torchrun's workers in the tree: the members with TORCHELASTIC_ERROR_FILE set, and their
// error files (guard/torchelastic.h).
struct TorchrunWorkers {
  std::vector<ProcStat> members;
  std::set<std::string> error_files;
};

TorchrunWorkers FindTorchrunWorkers(const SysRoot& root, const Child& child) {
  TorchrunWorkers w;
  for (const ProcStat& m : child.Members()) {
    if (auto file = TorchelasticErrorFileOf(root, m.pid)) {
      w.members.push_back(m);
      w.error_files.insert(*file);
    }
  }
  return w;
}

int SignalWorkers(Child& child, const TorchrunWorkers& w, int sig) {
  return child.SignalOnly(sig, [&](const ProcStat& m) {
    return std::any_of(w.members.begin(), w.members.end(), [&](const ProcStat& x) {
      return x.pid == m.pid && x.starttime_ticks == m.starttime_ticks;
    });
  });
}

// Each worker's error file, naming `why`; how many were written (a failure is a note event).
int WriteErrorFiles(const TorchrunWorkers& w, const std::string& why, GuardEvents& events) {
  int written_files = 0;
  const auto unix_s = static_cast<uint64_t>(::time(nullptr));
  for (const std::string& file : w.error_files) {
    auto written =
        WriteTorchelasticErrorFile(file, TorchelasticErrorJson("headroom guard: " + why, unix_s));
    if (written && *written) ++written_files;
    if (!written) events.Emit("note", {{"text", EnglishText(written.error().what)}});
  }
  return written_files;
}

// What signalling the workers first did.
struct WorkersFirstResult {
  int workers = 0;  // torchrun workers signalled (0: the whole tree was)
  int error_files = 0;
  int processes = 0;  // processes signalled
};

// The guard group's way to end a node's job (docs/guard-group.md "Ending a node's job"), for
// a peer's end and for this node's own memory trigger alike: torchrun's workers get their
// error files naming `why` and then `sig`, alone, so that the agent sees them fail, passes its
// exit barrier with the other nodes' agents and prints its failure summary (the rest of the
// tree gets SIGTERM when the grace ends: KillPolicy's kTermRest). The error files go first:
// the agent reads a worker's file as soon as it sees the worker fail, and a file written after
// the signal can lose that race. Without workers the whole tree gets `sig`.
WorkersFirstResult SignalWorkersFirst(const SysRoot& root, Child& child, const std::string& why,
                                      int sig, GuardEvents& events) {
  const TorchrunWorkers workers = FindTorchrunWorkers(root, child);
  WorkersFirstResult out;
  out.workers = static_cast<int>(workers.members.size());
  out.error_files = WriteErrorFiles(workers, why, events);
  out.processes = workers.members.empty() ? child.Signal(sig) : SignalWorkers(child, workers, sig);
  return out;
}

// The status a job's end reports to the group: its exit code, 128 + its signal, or 0.
int GroupReportStatus(std::optional<int> wait_status) {
  if (!wait_status) return 0;
  if (WIFEXITED(*wait_status)) return WEXITSTATUS(*wait_status);
  if (WIFSIGNALED(*wait_status)) return 128 + WTERMSIG(*wait_status);
  return 0;
}

// The guard loop's context: what it reads (MemAvailable, the per-CPU lists, the wake set), the
// job, the policy's state, the events, the group and the checkpoint asker. Start opens it all,
// each Step is one wakeup (read, decide, act, record), Finish returns the summary.
class GuardLoop {
 public:
  GuardLoop(const SysRoot& root, const GuardOptions& opt, GuardEvents& events, const GuardSay& say)
      : root_(root), opt_(opt), events_(events), say_(say), policy_(PolicyOptions(opt)) {}
  std::optional<Error> Start();
  bool Step();  // false once the job's tree is gone (and the group lets this guard go)
  GuardSummary Finish();

 private:
  std::optional<Error> OpenReaders();
  void EmitStart();
  GuardReading Read(uint32_t ready);
  void ForwardAndReap(bool signals_ready, bool job_exited, double now_s);
  void Warn(uint64_t available);
  void GroupStep(const GuardReading& r);
  void EndForGroup(GroupEnd end, const GuardReading& r);
  KillDecision DecideAndAct(const GuardReading& r);
  WorkersFirstResult Act(const KillDecision& d, const GuardReading& r, bool workers_first);
  void Record(const GuardReading& r);

  const SysRoot& root_;
  const GuardOptions& opt_;
  GuardEvents& events_;
  const GuardSay& say_;
  const KillPolicyOptions policy_;
  GuardSummary sum_;
  GuardState state_;
  std::optional<AvailableReader> reader_;
  std::optional<PerCpuFreeReader> per_cpu_;
  std::optional<Child> child_;
  std::vector<std::string> job_argv_;  // the command, or the attached process's (the next step)
  PsiTriggers psi_;
  std::optional<CheckpointAsker> checkpoint_;
  std::optional<WakeSet> wake_;
  bool warned_ = false;
  bool told_group_ = false;
  double crossing_s_ = 0;
  double last_rss_s_ = -1;
  double last_tick_s_ = 0;
  double last_read_s_ = -1;
};

// MemAvailable's descriptor and its first reading; the per-CPU lists when asked.
std::optional<Error> GuardLoop::OpenReaders() {
  const std::string meminfo_path = root_.Path("proc/meminfo").string();
  FileFd meminfo_fd(OpenKernelFile(meminfo_path));  // a FIFO under --root cannot hang it
  if (meminfo_fd.get() < 0) return ErrnoError("cannot open " + meminfo_path);
  reader_.emplace(std::move(meminfo_fd));
  if (auto info = ReadMemInfo(root_)) sum_.mem_total_bytes = info->total_bytes().value_or(0);
  const auto first = reader_->Read();
  if (!first)
    return Error{meminfo_path + ": no MemAvailable line (kernel before 3.14?); the guard needs it"};
  sum_.start_available_bytes = sum_.lowest_available_bytes = *first;
  state_.last_available_bytes = *first;
  if (opt_.count_per_cpu_free) {
    per_cpu_.emplace(root_);
    if (auto pcp = per_cpu_->ReadBytes()) {
      sum_.start_effective_available_bytes = sum_.lowest_effective_available_bytes = *first + *pcp;
    } else {
      per_cpu_.reset();
      AddNote(sum_, Msg("proc/zoneinfo has no per-CPU lists: the peak is from MemAvailable alone"));
    }
  }
  return std::nullopt;
}

std::optional<Error> GuardLoop::Start() {
  if (auto error = OpenReaders()) return error;
  ProtectGuard(root_, sum_);
  auto child = StartJob(root_, opt_, sum_);
  if (!child) return child.error();
  child_.emplace(std::move(*child));
  job_argv_ = opt_.command;
  if (opt_.attach_pid) {
    if (auto facts = ReadProcessBasics(root_, *opt_.attach_pid)) job_argv_ = facts->argv;
  }
  psi_ = OpenPsi(root_, opt_, sum_);
  state_.start_s = state_.last_reading_s = last_tick_s_ = MonoSeconds();
  EmitStart();
  if (opt_.checkpoint) checkpoint_.emplace(root_, *opt_.checkpoint, state_.start_s);
  wake_.emplace(child_->signals().fd(), psi_.some.get(), psi_.full.get(), child_->pidfd(),
                opt_.group ? opt_.group->fd() : -1);
  child_->ReserveDescriptors(kKillPathSpareDescriptors);  // the last to open: the loop's own
  return std::nullopt;
}

void GuardLoop::EmitStart() {
  events_.Emit("start", {{"pid", child_->pid()},
                         {"available_bytes", sum_.start_available_bytes},
                         {"kill_below_bytes", opt_.min_available_bytes},
                         {"warn_below_bytes", opt_.warn_available_bytes},
                         {"cgroup", sum_.cgroup.substr(0, 200)}});
  for (const auto& n : sum_.notes) events_.Emit("note", {{"text", EnglishText(n)}});
  if (opt_.group) {
    const GuardGroupSettings& g = opt_.group->settings();
    events_.Emit("group", {{"node_rank", g.node_rank},
                           {"nodes", g.nodes},
                           {"coordinator", g.host + ":" + std::to_string(opt_.group->port())},
                           {"job_id", g.job_id},
                           {"heartbeat_ms", g.heartbeat.count()},
                           {"heartbeat_timeout_ms", g.heartbeat_timeout.count()}});
  }
}

// One wakeup: read, decide, act, record.
bool GuardLoop::Step() {
  // The job's pidfd only while it runs: an exited process's pidfd stays readable.
  if (!child_->running()) wake_->DropJob();
  const auto period = opt_.group ? std::min(state_.period, opt_.group->UntilDue()) : state_.period;
  GuardReading r = Read(wake_->Wait(period));
  Warn(r.available_bytes);
  if (opt_.group) GroupStep(r);
  r.job_running = child_->running();
  if (!r.job_running) r.tree_empty = child_->Members().empty();
  const KillDecision d = DecideAndAct(r);
  // Beside the decision, never in its way: ask for a checkpoint at the warning level.
  if (checkpoint_) {
    checkpoint_->Tick({r.now_s, r.available_bytes, opt_.warn_available_bytes,
                       opt_.min_available_bytes, state_.fall_rate_bytes_per_s, state_.triggered},
                      *child_, events_);
  }
  Record(r);
  // Rank 0 whose own job is done stays while members run (guard/guard_group.h Holding).
  if (d.action == GuardAction::kDone) {
    if (!opt_.group || !opt_.group->Holding()) return false;
    state_.period = std::chrono::milliseconds(1000);  // the heartbeats wake it sooner
  }
  KillPolicy::Apply(state_, d, r, policy_);  // the next period
  return true;
}

// The signals that came, the exited processes reaped, MemAvailable folded into the fall rate.
GuardReading GuardLoop::Read(uint32_t ready) {
  GuardReading r;
  r.now_s = MonoSeconds();
  if (state_.triggered && last_read_s_ >= 0) {
    sum_.longest_gap_after_trigger_ms =
        std::max(sum_.longest_gap_after_trigger_ms.value_or(0), (r.now_s - last_read_s_) * 1000);
  }
  last_read_s_ = r.now_s;
  ForwardAndReap((ready & WakeSet::kSignals) != 0, (ready & WakeSet::kJob) != 0, r.now_s);
  if (ready & WakeSet::kPsiSome)
    events_.Emit("pressure", {{"kind", "some"}, {"stall_ms_per_s", 150}});
  r.psi_full = (ready & WakeSet::kPsiFull) != 0;
  const auto reading = reader_->Read();
  ++sum_.polls;
  r.available_bytes = reading.value_or(state_.last_available_bytes);
  sum_.lowest_available_bytes = std::min(sum_.lowest_available_bytes, r.available_bytes);
  if (per_cpu_ && reading) {
    if (auto pcp = per_cpu_->ReadBytes()) {
      sum_.lowest_effective_available_bytes =
          std::min(*sum_.lowest_effective_available_bytes, r.available_bytes + *pcp);
    }
  }
  KillPolicy::Observe(state_, r);
  return r;
}

// Signals to the guard go to the job tree; every exited process is reaped, and its own peak
// RSS comes with it (wait4's ru_maxrss, KiB), exact where the sampled tree sum can miss a
// short peak. Reaps after a SIGCHLD or once the job's pidfd is readable (a thread of the
// caller that does not block SIGCHLD can take the signal), so an idle wakeup costs an
// epoll_wait and a pread.
void GuardLoop::ForwardAndReap(bool signals_ready, bool job_exited, double now_s) {
  Child& child = *child_;
  bool reap = job_exited || child.pidfd() < 0;
  while (auto s = signals_ready ? child.signals().Next() : std::nullopt) {
    if (*s == SIGCHLD) {
      reap = true;
      continue;
    }
    if (!EndsTheJob(*s)) {
      events_.Emit("ignored", {{"signal", *s}});
      continue;
    }
    if (!sum_.forwarded_signal) sum_.forwarded_signal = *s;
    KillPolicy::Forwarded(state_, now_s);
    const int n = child.Signal(*s);
    events_.Emit("forward", {{"signal", *s}, {"processes", n}});
  }
  while (reap) {
    int status = 0;
    rusage usage{};
    const pid_t p = ::wait4(-1, &status, WNOHANG, &usage);
    if (p <= 0) break;
    if (p == child.pid() && !child.attached()) child.MarkReaped(status);
    sum_.peak_tree_rss_bytes =
        std::max(sum_.peak_tree_rss_bytes, static_cast<uint64_t>(usage.ru_maxrss) * 1024);
  }
}

// One warning line (and event) per crossing below the warning level.
void GuardLoop::Warn(uint64_t available) {
  const uint64_t warn = opt_.warn_available_bytes;
  if (available >= warn) {
    warned_ = false;
    return;
  }
  if (warned_) return;
  warned_ = true;
  ++sum_.warnings;
  events_.Emit("warn", {{"available_bytes", available}, {"warn_below_bytes", warn}});
  const bool said =
      !say_ ||
      say_(Msg("headroom guard: warning: MemAvailable {:.2f} GiB is below the warning "
               "level {:.2f} GiB",
               static_cast<double>(available) / (1 << 30), static_cast<double>(warn) / (1 << 30)));
  if (!said && !sum_.say_failed) {
    sum_.say_failed = true;
    AddNote(sum_, Msg("a warning line could not be written (stderr closed or full); the guard "
                      "carried on"));
    events_.Emit("note", {{"text", EnglishText(sum_.notes.back())}});
  }
}

// The guard group's part of one wakeup: this node's own end told once the job has exited (a
// failure, or done), and the group's verdict acted on.
void GuardLoop::GroupStep(const GuardReading& r) {
  GuardGroup& group = *opt_.group;
  if (!told_group_ && !child_->running()) {
    told_group_ = true;
    if (!sum_.killed && !sum_.group_end) {
      const int status = GroupReportStatus(child_->wait_status());
      if (status == 0) {
        group.OwnDone();
      } else {
        group.OwnFailed(status);
      }
      events_.Emit("group-report",
                   {{"report", status == 0 ? "done" : "failed"}, {"status", status}});
    }
  }
  if (auto end = group.Poll()) EndForGroup(*end, r);
}

// The guard group ended this node's job: the workers first (or the whole tree), and the
// policy's deadlines from now (KillPolicy::GroupEnded).
void GuardLoop::EndForGroup(GroupEnd end, const GuardReading& r) {
  const std::string why = EnglishText(GroupEndMessage(end, opt_.group->settings().node_rank));
  const WorkersFirstResult first = SignalWorkersFirst(root_, *child_, why, SIGTERM, events_);
  end.error_files = first.error_files;
  end.workers = first.workers;
  KillPolicy::GroupEnded(state_, r.now_s, first.workers > 0, policy_);
  events_.Emit("group-end", {{"cause", GroupEndCauseName(end.cause)},
                             {"origin_rank", end.origin_rank},
                             {"available_bytes", end.available_bytes},
                             {"level_bytes", end.level_bytes},
                             {"status", end.status},
                             {"relayed", end.relayed},
                             {"workers", end.workers},
                             {"error_files", end.error_files},
                             {"processes", first.processes},
                             {"text", why}});
  sum_.group_end = end;
}

// The policy's decisions at this reading, each acted on and applied, until nothing is left to
// do; the last one (kNone with the next period, or kDone).
KillDecision GuardLoop::DecideAndAct(const GuardReading& r) {
  KillDecision d = KillPolicy::Decide(state_, r, policy_);
  for (; d.action != GuardAction::kNone && d.action != GuardAction::kDone;
       d = KillPolicy::Decide(state_, r, policy_)) {
    if (d.action == GuardAction::kTrigger) crossing_s_ = r.now_s;
    const bool group_trigger = d.action == GuardAction::kTrigger && opt_.group && !sum_.group_end;
    const WorkersFirstResult first = Act(d, r, group_trigger);
    KillPolicy::Apply(state_, d, r, policy_);
    if (first.workers > 0) {
      KillPolicy::WorkersFirst(state_, r.now_s, policy_);  // the agent's turn: kTermRest
      events_.Emit("group-workers",
                   {{"workers", first.workers}, {"error_files", first.error_files}});
    }
    if (group_trigger) {
      // After the signal: the group hears of it within the same wakeup.
      opt_.group->OwnMemory(r.available_bytes, opt_.min_available_bytes);
      events_.Emit("group-report", {{"report", "ended-for-memory"},
                                    {"available_bytes", r.available_bytes},
                                    {"level_bytes", opt_.min_available_bytes}});
    }
  }
  return d;
}

// Carries out one decision of the policy: the signal, the summary's record of it, events.
// `workers_first`: in a guard group, a memory trigger signals torchrun's workers alone
// (SignalWorkersFirst).
WorkersFirstResult GuardLoop::Act(const KillDecision& d, const GuardReading& r,
                                  bool workers_first) {
  WorkersFirstResult first;
  Child& child = *child_;
  switch (d.action) {
    case GuardAction::kTrigger: {
      sum_.killed = true;
      sum_.kill_reason = std::string(d.reason);
      sum_.trigger_available_bytes = r.available_bytes;
      sum_.kill_level_bytes = opt_.min_available_bytes;
      sum_.fall_rate_bytes_per_s = state_.fall_rate_bytes_per_s;
      if (d.reason == "projected" && state_.fall_rate_bytes_per_s > 0) {
        sum_.projected_s = (static_cast<double>(r.available_bytes) -
                            static_cast<double>(opt_.min_available_bytes)) /
                           state_.fall_rate_bytes_per_s;
      }
      if (workers_first) {
        const uint16_t rank = opt_.group->settings().node_rank;
        const GroupEnd own{GroupEnd::Cause::kPeerMemory, rank, r.available_bytes,
                           opt_.min_available_bytes};
        first = SignalWorkersFirst(root_, child, EnglishText(GroupEndMessage(own, rank)), d.signal,
                                   events_);
      } else {
        first.processes = child.Signal(d.signal);
      }
      sum_.signal_path = d.severe ? "SIGKILL at once" : "SIGTERM";
      sum_.crossing_to_signal_ms = (MonoSeconds() - r.now_s) * 1000;
      if (d.severe) child.ReleaseMemoryInBackground();
      // The rate as a whole number of bytes per second, rounded as printf's %.0f rounds.
      events_.Emit("trigger", {{"reason", d.reason},
                               {"available_bytes", r.available_bytes},
                               {"kill_below_bytes", opt_.min_available_bytes},
                               {"fall_rate_bytes_per_s",
                                static_cast<int64_t>(std::nearbyint(state_.fall_rate_bytes_per_s))},
                               {"projected_s", OrNull<nlohmann::json>(sum_.projected_s)}});
      events_.Emit(d.severe ? "kill" : "term", {{"processes", first.processes}});
      break;
    }
    case GuardAction::kTimeout: {
      // The trial timeout of a sweep: the same path as a kill, without a memory reason.
      sum_.timed_out = true;
      const int n = child.Signal(SIGTERM);
      events_.Emit("timeout", {{"after_s", r.now_s - state_.start_s}, {"processes", n}});
      break;
    }
    case GuardAction::kEscalate: {
      const int n = child.Signal(SIGKILL);
      child.ReleaseMemoryInBackground();
      if (state_.triggered) {
        sum_.signal_path = d.reason == "crossing" ? "SIGTERM, SIGKILL at the level"
                                                  : "SIGTERM, SIGKILL after grace";
      }
      events_.Emit(
          "kill",
          {{"processes", n}, {"after_term_s", r.now_s - state_.term_s}, {"reason", d.reason}});
      break;
    }
    case GuardAction::kCleanup:
      events_.Emit("cleanup", {{"processes", child.Signal(SIGTERM)}});
      break;
    case GuardAction::kTermRest:
      events_.Emit("group-term", {{"processes", child.Signal(SIGTERM)}});
      break;
    case GuardAction::kNone:
    case GuardAction::kDone:
      break;
  }
  return first;
}

// The progress callback, and the tree's RSS at its sampling period.
void GuardLoop::Record(const GuardReading& r) {
  const double tick_s = std::chrono::duration<double>(opt_.tick_period).count();
  if (opt_.on_tick && r.now_s - last_tick_s_ >= tick_s) {
    last_tick_s_ = r.now_s;
    opt_.on_tick(r.available_bytes, r.now_s - state_.start_s);
  }
  const bool near = r.available_bytes < 2 * opt_.min_available_bytes ||
                    state_.fall_rate_bytes_per_s > kFastFallBytesPerSecond || state_.triggered;
  if (r.now_s - last_rss_s_ >= (near ? kRssSampleNearSeconds : kRssSampleFarSeconds)) {
    last_rss_s_ = r.now_s;
    sum_.peak_tree_rss_bytes = std::max(sum_.peak_tree_rss_bytes, child_->RssBytes());
  }
}

// The summary's figures once the tree is empty, and the closing events.
GuardSummary GuardLoop::Finish() {
  const double end = MonoSeconds();
  sum_.duration_s = end - state_.start_s;
  if (state_.triggered) sum_.crossing_to_empty_ms = (end - crossing_s_) * 1000;
  sum_.available_after_bytes = reader_->Read();
  sum_.peak_pool_use_bytes = sum_.mem_total_bytes > sum_.lowest_available_bytes
                                 ? sum_.mem_total_bytes - sum_.lowest_available_bytes
                                 : 0;
  if (child_->cgroup()) sum_.cgroup_peak_bytes = child_->cgroup()->PeakBytes();
  if (const auto status = child_->wait_status()) {
    if (WIFEXITED(*status)) sum_.job_exit_code = WEXITSTATUS(*status);
    if (WIFSIGNALED(*status)) sum_.job_signal = WTERMSIG(*status);
  }
  if (sum_.group_end) {
    sum_.exit_status = GroupEndExitStatus(*sum_.group_end);
  } else if (sum_.killed) {
    sum_.exit_status = kExitGuardKilled;
  } else if (sum_.job_exit_code) {
    sum_.exit_status = *sum_.job_exit_code;
  } else if (sum_.job_signal) {
    sum_.exit_status = 128 + *sum_.job_signal;
  }
  if (opt_.group) {
    events_.Emit("group-leave", {{"refused", opt_.group->refused()},
                                 {"longest_silence_ms", opt_.group->longest_silence_ms()}});
  }
  if (checkpoint_) sum_.checkpoint = checkpoint_->Finish(events_);
  if (sum_.killed) {
    sum_.records_peak_bytes = RecordsPeakBytes(opt_);
    sum_.next_step = NextStepCommand(job_argv_);
  }
  events_.Emit("exit", {{"exit_status", sum_.exit_status},
                        {"killed_by_guard", sum_.killed},
                        {"lowest_available_bytes", sum_.lowest_available_bytes},
                        {"available_after_bytes", sum_.available_after_bytes.value_or(0)},
                        {"kill", KillJson(sum_)}});
  return std::move(sum_);
}

}  // namespace

Result<GuardSummary> RunGuard(const SysRoot& root, const GuardOptions& opt, GuardEvents& events,
                              const GuardSay& say) {
  GuardLoop loop(root, opt, events, say);
  if (auto error = loop.Start()) return *error;
  while (loop.Step()) {
  }
  return loop.Finish();
}

nlohmann::json GuardSummaryJson(const GuardSummary& s, uint64_t level, uint64_t warn) {
  std::vector<std::string> notes;
  for (const auto& n : s.notes) notes.push_back(EnglishText(n));
  return {
      {"schema_version", 1},
      {"killed_by_guard", s.killed},
      {"kill_reason", s.killed ? nlohmann::json(s.kill_reason) : nlohmann::json(nullptr)},
      {"signal_path", s.killed ? nlohmann::json(s.signal_path) : nlohmann::json(nullptr)},
      {"exit_status", s.exit_status},
      {"job_exit_code", OrNull<nlohmann::json>(s.job_exit_code)},
      {"job_signal", OrNull<nlohmann::json>(s.job_signal)},
      {"duration_s", s.duration_s},
      {"kill_below_bytes", level},
      {"warn_below_bytes", warn},
      {"mem_total_bytes", s.mem_total_bytes},
      {"start_available_bytes", s.start_available_bytes},
      {"lowest_available_bytes", s.lowest_available_bytes},
      {"peak_pool_use_bytes", s.peak_pool_use_bytes},
      {"peak_tree_rss_bytes", s.peak_tree_rss_bytes},
      {"cgroup_peak_bytes", OrNull<nlohmann::json>(s.cgroup_peak_bytes)},
      {"trigger_available_bytes", OrNull<nlohmann::json>(s.trigger_available_bytes)},
      {"kill", KillJson(s)},
      {"crossing_to_signal_ms", OrNull<nlohmann::json>(s.crossing_to_signal_ms)},
      {"longest_gap_after_trigger_ms", OrNull<nlohmann::json>(s.longest_gap_after_trigger_ms)},
      {"crossing_to_empty_ms", OrNull<nlohmann::json>(s.crossing_to_empty_ms)},
      {"available_after_bytes", OrNull<nlohmann::json>(s.available_after_bytes)},
      {"cgroup", s.cgroup},
      {"warnings", s.warnings},
      {"polls", s.polls},
      {"notes", notes},
      {"group_end", s.group_end ? nlohmann::json{{"cause", GroupEndCauseName(s.group_end->cause)},
                                                 {"origin_rank", s.group_end->origin_rank},
                                                 {"available_bytes", s.group_end->available_bytes},
                                                 {"level_bytes", s.group_end->level_bytes},
                                                 {"status", s.group_end->status},
                                                 {"relayed", s.group_end->relayed},
                                                 {"workers", s.group_end->workers},
                                                 {"error_files", s.group_end->error_files}}
                                : nlohmann::json(nullptr)},
      {"checkpoint", s.checkpoint ? CheckpointSummaryJson(*s.checkpoint) : nlohmann::json(nullptr)},
  };
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
