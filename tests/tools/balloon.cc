// balloon: a test and benchmark helper that allocates and touches memory at a set rate up to
// a cap and then holds it, so that `headroom guard` can be tried against a real, growing job
// (design: docs/guard-benchmark.md, "Method"). Flags and exit statuses: --help.
//
// Implementation notes
// - Safety first. The cap is never exceeded: each worker's share is rounded down to whole
//   pages and the shares sum to at most --cap. Caps above 8 GiB need --allow-large (and 1 TiB
//   is refused outright as a typo). Every process, escapees included, exits by itself at
//   --timeout (default 60 s, at most 1 h), measured from one CLOCK_MONOTONIC start that the
//   whole tree shares, so a stray balloon never outlives a crashed harness for long.
// - Modes. anon: private anonymous mmap with MADV_NOHUGEPAGE, so faults stay 4 KiB even when
//   THP is "always" (the benchmark's THP-off case). thp: a 2 MiB-aligned mapping with
//   MADV_HUGEPAGE, trimmed to exactly the share so no huge page can reach past it. memfd: a
//   memfd grown with fallocate() and never mapped. Its pages are shmem on the anon LRU, so
//   MemAvailable drops while no RSS or AnonPages grows: the stand-in for driver-owned GPU
//   memory on GB10's unified memory (scenario S6). It is freed when the last fd closes, that
//   is when the process dies.
// - Pacing is a token bucket one 4 MiB chunk deep: a worker that falls behind (slow faults,
//   a descheduled CPU) does not burst to catch up. --children N splits the rate and the cap.
// - Progress lives in a MAP_SHARED mapping (the --progress file, else anonymous) that every
//   worker inherits and updates with lock-free atomics, so a harness reads (t, bytes) at any
//   time without pipes. The SIGTERM handler writes to the same mapping, which is the only
//   async-signal-safe way to report the signal's arrival time.
//   The layout is in balloon_progress.h; the flags are in balloon_options.cc.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "balloon_options.h"
#include "balloon_progress.h"

namespace {

using balloon::kLogCapacity, balloon::kLogOffset, balloon::kProgressFileBytes;
using balloon::kNsPerS, balloon::Mode, balloon::Options;
using balloon::LogEntry, balloon::ProgressHeader;

constexpr uint64_t kMiB = 1ULL << 20;
constexpr uint64_t kChunkBytes = 4 * kMiB;  // the benchmark's step (docs/sources.md section 3)
// The PMD huge page size with 4 KiB base pages (x86-64, and aarch64 as DGX OS ships it).
// With 64 KiB base pages it is 512 MiB and thp mode just gets base pages: still correct.
constexpr uint64_t kHugePageBytes = 2 * kMiB;
constexpr int kExitOk = 0, kExitFailure = 1, kExitUsage = 2, kExitTerm = 128 + SIGTERM;

// Shared between processes and read from a signal handler: lock-free or nothing.
static_assert(std::atomic_ref<uint64_t>::is_always_lock_free);

std::atomic_ref<uint64_t> Atomic(uint64_t& field) { return std::atomic_ref<uint64_t>(field); }

// The one namespace-level mutable: a signal handler can reach nothing else. Set once, before
// the handler is installed, and never changed.
ProgressHeader* g_progress = nullptr;
// --stop-on-term: set by the SIGTERM handler, read by the workers' loops.
volatile sig_atomic_t g_stop_growing = 0;

uint64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * kNsPerS + static_cast<uint64_t>(ts.tv_nsec);
}

// Sleeps until CLOCK_MONOTONIC reaches `t_ns`, through signal interruptions.
void SleepUntil(uint64_t t_ns) {
  const timespec ts{static_cast<time_t>(t_ns / kNsPerS), static_cast<long>(t_ns % kNsPerS)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

extern "C" void OnSigterm(int) {
  if (ProgressHeader* p = g_progress) {
    uint64_t expected = 0;
    // The first process to catch SIGTERM wins; the guard signals a whole tree.
    if (Atomic(p->t_term_ns).compare_exchange_strong(expected, NowNs())) {
      Atomic(p->bytes_term).store(Atomic(p->bytes).load());
    }
  }
  _exit(kExitTerm);
}

// --stop-on-term: the signal's arrival is recorded as OnSigterm records it; the process then
// touches nothing more and holds what it has until SIGKILL or --timeout.
extern "C" void OnSigtermStop(int) {
  if (ProgressHeader* p = g_progress) {
    uint64_t expected = 0;
    if (Atomic(p->t_term_ns).compare_exchange_strong(expected, NowNs())) {
      Atomic(p->bytes_term).store(Atomic(p->bytes).load());
    }
  }
  g_stop_growing = 1;
}

// The shared progress record: the --progress file, or anonymous shared memory without one
// (the children still need a common counter to tell when the tree reached the cap).
ProgressHeader* MapProgress(const std::string& path) {
  int fd = -1;
  if (!path.empty()) {
    fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || ftruncate(fd, kProgressFileBytes) != 0) {
      std::fprintf(stderr, "balloon: cannot create the progress file: %s(%s): %s\n",
                   fd < 0 ? "open" : "ftruncate", path.c_str(), std::strerror(errno));
      if (fd >= 0) close(fd);
      return nullptr;
    }
  }
  const int flags = MAP_SHARED | (fd < 0 ? MAP_ANONYMOUS : 0);
  void* m = mmap(nullptr, kProgressFileBytes, PROT_READ | PROT_WRITE, flags, fd, 0);
  if (fd >= 0) close(fd);
  if (m == MAP_FAILED) {
    std::fprintf(stderr, "balloon: cannot map progress: mmap(%zu): %s\n", kProgressFileBytes,
                 std::strerror(errno));
    return nullptr;
  }
  // Best effort: a locked record never faults while a guard squeezes memory; without
  // CAP_IPC_LOCK and a small RLIMIT_MEMLOCK it just stays unlocked.
  (void)mlock(m, kProgressFileBytes);
  return static_cast<ProgressHeader*>(m);
}

// Adds `n` touched bytes to the shared total and appends a log entry.
void Record(ProgressHeader* p, uint64_t n) {
  const uint64_t now = NowNs();
  const uint64_t total = Atomic(p->bytes).fetch_add(n) + n;
  uint64_t seen = Atomic(p->t_ns).load();  // keep t_ns monotonic across racing workers
  while (seen < now && !Atomic(p->t_ns).compare_exchange_weak(seen, now)) {
  }
  auto* log = reinterpret_cast<LogEntry*>(reinterpret_cast<char*>(p) + kLogOffset);
  LogEntry& e = log[Atomic(p->log_count).fetch_add(1) % kLogCapacity];
  Atomic(e.t_ns).store(0);
  Atomic(e.bytes).store(total);
  Atomic(e.t_ns).store(now);
  if (total == p->cap_bytes) Atomic(p->t_cap_ns).store(now);
}

// One worker: touch `share` bytes at `rate` bytes/s, hold, return an exit status.
int RunWorker(const Options& o, uint64_t share, uint64_t rate, uint64_t deadline_ns,
              ProgressHeader* progress) {
  char* base = nullptr;
  int memfd = -1;
  if (share > 0 && o.mode == Mode::kMemfd) {
    memfd = memfd_create("balloon", MFD_CLOEXEC);
    if (memfd < 0) {
      std::fprintf(stderr, "balloon: memfd_create(balloon): %s\n", std::strerror(errno));
      return kExitFailure;
    }
  } else if (share > 0) {
    // thp maps one huge page more, then trims both ends to a 2 MiB-aligned span of exactly
    // `share`, so no huge page can extend past the cap.
    const uint64_t span = share + (o.mode == Mode::kThp ? kHugePageBytes : 0);
    void* m = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      std::fprintf(stderr, "balloon: mmap(%llu): %s\n", static_cast<unsigned long long>(span),
                   std::strerror(errno));
      return kExitFailure;
    }
    base = static_cast<char*>(m);
    if (o.mode == Mode::kThp) {
      char* aligned = reinterpret_cast<char*>(
          (reinterpret_cast<uintptr_t>(base) + kHugePageBytes - 1) & ~(kHugePageBytes - 1));
      if (aligned > base) munmap(base, aligned - base);
      if (base + span > aligned + share) munmap(aligned + share, base + span - aligned - share);
      base = aligned;
    }
    // EINVAL on kernels without THP; then every page is a base page anyway.
    if (madvise(base, share, o.mode == Mode::kThp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0 &&
        o.mode == Mode::kThp) {
      std::fprintf(stderr, "balloon: note: madvise(MADV_HUGEPAGE): %s\n", std::strerror(errno));
    }
  }
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const double ns_per_byte = rate > 0 ? 1e9 / static_cast<double>(rate) : 0;
  uint64_t done = 0, due_ns = NowNs();
  while (done < share && !g_stop_growing) {
    if (rate > 0) SleepUntil(std::min(due_ns, deadline_ns));
    if (g_stop_growing) break;
    if (NowNs() >= deadline_ns) return kExitOk;  // too slow to reach the cap: still bounded
    const uint64_t n = std::min(kChunkBytes, share - done);
    if (memfd >= 0) {
      if (fallocate(memfd, 0, static_cast<off_t>(done), static_cast<off_t>(n)) != 0) {
        std::fprintf(stderr, "balloon: fallocate(memfd, %llu): %s\n",
                     static_cast<unsigned long long>(done + n), std::strerror(errno));
        return kExitFailure;
      }
    } else {
      // One write per page allocates it; volatile keeps the compiler from skipping it.
      volatile char* bytes = base;
      for (uint64_t off = done; off < done + n; off += page) bytes[off] = 1;
    }
    done += n;
    Record(progress, n);
    // Token bucket one chunk deep: a debt older than one chunk is forgiven, not repaid.
    const auto n_ns = static_cast<uint64_t>(static_cast<double>(n) * ns_per_byte);
    const uint64_t now = NowNs();
    due_ns = std::max(due_ns, now > n_ns ? now - n_ns : 0) + n_ns;
  }
  SleepUntil(o.hold_ns && !g_stop_growing ? std::min(NowNs() + *o.hold_ns, deadline_ns)
                                          : deadline_ns);
  return kExitOk;
}

// Appends "PID\n" to the pidfile; O_APPEND makes each short write atomic between processes.
void Register(int pidfile_fd) {
  if (pidfile_fd < 0) return;
  const std::string line = std::to_string(getpid()) + "\n";
  if (write(pidfile_fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    std::fprintf(stderr, "balloon: note: write(pidfile): %s\n", std::strerror(errno));
  }
}

// 128 + signal for a killed child, its exit status otherwise (the shell's convention).
int StatusOf(int wstatus) {
  return WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus) : WEXITSTATUS(wstatus);
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<Options> parsed = balloon::ParseArgs(argc, argv);
  if (!parsed) return kExitUsage;
  const Options& o = *parsed;
  if (o.help) {
    std::fputs(balloon::kUsage, stdout);
    return kExitOk;
  }
  ProgressHeader* const progress = MapProgress(o.progress_path);
  if (progress == nullptr) return kExitFailure;
  const uint64_t start_ns = NowNs(), deadline_ns = start_ns + o.timeout_ns;

  // Shares: worker i gets the pages between i/N and (i+1)/N of the cap, so they sum to the
  // cap rounded down to a page and differ by at most one page. cap <= 1 TiB: no overflow.
  const int workers = std::max(1, o.children);
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const auto edge = [&](int i) { return o.cap_bytes * i / workers / page * page; };
  std::memcpy(progress->magic, "BALLOON", 8);
  progress->cap_bytes = edge(workers);
  progress->t_start_ns = start_ns;
  progress->workers = static_cast<uint64_t>(workers);
  progress->log_capacity = kLogCapacity;
  // Last: a reader that sees the version also sees the fields above.
  Atomic(progress->version).store(balloon::kProgressVersion);

  signal(SIGPIPE, SIG_IGN);  // a harness that closes our stdout must not kill the balloon
  g_progress = progress;
  // Children inherit each.
  signal(SIGTERM, o.ignore_term ? SIG_IGN : o.stop_on_term ? OnSigtermStop : OnSigterm);
  if (o.oom_score_adj) {
    const std::string text = std::to_string(*o.oom_score_adj);
    const int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, text.data(), text.size()) < 0) {
      std::fprintf(stderr, "balloon: note: write(/proc/self/oom_score_adj, %s): %s\n", text.c_str(),
                   std::strerror(errno));
    }
    if (fd >= 0) close(fd);
  }
  int pidfile_fd = -1;
  if (!o.pidfile_path.empty()) {
    pidfile_fd =
        open(o.pidfile_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (pidfile_fd < 0) {
      std::fprintf(stderr, "balloon: cannot create the pidfile: open(%s): %s\n",
                   o.pidfile_path.c_str(), std::strerror(errno));
      return kExitFailure;
    }
  }
  Register(pidfile_fd);

  if (o.children == 0) {
    std::printf("ready %d\n", static_cast<int>(getpid()));
    std::fflush(stdout);
    return RunWorker(o, edge(1), o.rate_bytes_per_s, deadline_ns, progress);
  }

  // Each worker closes its end of `registered` once its pid is in the pidfile, so EOF on the
  // read end means every pid is listed. SIGCHLD stays blocked so the hold below can wait for
  // it with sigtimedwait and reap a dead child at once (a zombie would look alive to a test).
  int registered[2];
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, nullptr);
  if (pipe2(registered, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "balloon: pipe2: %s\n", std::strerror(errno));
    return kExitFailure;
  }
  const pid_t parent = getpid();
  const bool escape = o.setsid || o.double_fork || o.no_pdeathsig;
  std::vector<pid_t> direct;
  for (int i = 0; i < o.children; ++i) {
    const pid_t child = fork();
    if (child < 0) {
      std::fprintf(stderr, "balloon: fork: %s\n", std::strerror(errno));
      return kExitFailure;  // plain children die with us (PDEATHSIG); escapees by timeout
    }
    if (child == 0) {
      sigprocmask(SIG_UNBLOCK, &chld, nullptr);
      close(registered[0]);
      if (o.setsid && setsid() < 0) _exit(kExitFailure);
      if (!escape) {
        // Die with the parent; the check closes the race with a parent already gone.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(kExitOk);
      }
      if (o.double_fork) {
        const pid_t grandchild = fork();
        if (grandchild != 0) _exit(grandchild < 0 ? kExitFailure : kExitOk);
      }
      Register(pidfile_fd);
      close(registered[1]);
      _exit(
          RunWorker(o, edge(i + 1) - edge(i), o.rate_bytes_per_s / workers, deadline_ns, progress));
    }
    // The intermediate of a double fork exits at once; reap it so no zombie lingers.
    if (o.double_fork) {
      while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
      }
    } else {
      direct.push_back(child);
    }
  }
  close(registered[1]);
  char byte;
  ssize_t got;
  do {
    got = read(registered[0], &byte, 1);
  } while (got < 0 && errno == EINTR);
  close(registered[0]);
  std::printf("ready %d\n", static_cast<int>(parent));
  std::fflush(stdout);

  // The parent touches nothing, so its hold starts now. Then it waits for the direct
  // children, which end by the same deadline at the latest.
  const uint64_t hold_end_ns =
      o.hold_ns ? std::min(NowNs() + *o.hold_ns, deadline_ns) : deadline_ns;
  int status = kExitOk;
  const auto reap = [&](int flags) {
    int wstatus = 0;
    const pid_t pid = waitpid(-1, &wstatus, flags);
    if (pid <= 0) return false;
    std::erase(direct, pid);
    if (status == kExitOk) status = StatusOf(wstatus);
    return true;
  };
  for (uint64_t now = NowNs(); now < hold_end_ns; now = NowNs()) {
    while (reap(WNOHANG)) {
    }
    const uint64_t left = hold_end_ns - now;
    const timespec wait{static_cast<time_t>(left / kNsPerS), static_cast<long>(left % kNsPerS)};
    sigtimedwait(&chld, nullptr, &wait);
  }
  while (!direct.empty() && (reap(0) || errno == EINTR)) {
  }
  return status;
}
