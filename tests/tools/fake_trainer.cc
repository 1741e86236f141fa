// fake_trainer: a stand-in training job for `headroom sweep`'s tests and benchmark. It
// allocates and touches (A + B*batch + C*batch^2) MiB, scaled by seq / seq-ref, holds it
// for --hold, and exits 0; or fails the way real trainers do.
//
//   fake_trainer --batch N [--seq S] [--a MIB] [--b MIB] [--c MIB] [--seq-ref S]
//                [--hold MS] [--fail oom|error|hang] [--fail-at BATCH] [--oom-above MIB]
//                [--children N] [--record FILE] [--timeout S] [--step-records]
//
// --fail oom prints a PyTorch CUDA OOM message and exits 1; error prints a ValueError and
// exits 1; hang allocates and then sleeps until killed (with --children N, N children
// sleep too, each in its own session, so the sweep's tree cleanup is tested). --fail-at
// applies --fail only from that batch up. --oom-above: fail with the OOM message instead
// of allocating more than MIB (a trainer's own allocator cap). --record appends
// "batch=N seq=S pid=P" to FILE at start (the tests' record of launches), and each hanging
// child "child pid=P". Every process
// exits by itself after --timeout seconds (default 60) so none outlives a broken harness.
// --step-records: once its memory is touched, and again before it exits, it appends a step
// record with its peak RSS to the file HEADROOM_STEP_RECORDS names, as the Python companion
// does for a job on the CPU (docs/companion.md), so a sweep takes the trial's peak from the
// job itself rather than from MemAvailable.
//
// Memory is a private anonymous mapping populated at mmap time, capped at 8 GiB: the
// tests scale sizes to fit this machine.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

constexpr double kMaxMiB = 8192;

struct Options {
  long batch = 1, seq = 1024, seq_ref = 1024, hold_ms = 300, children = 0, timeout_s = 60;
  long fail_at = 0;
  double a = 64, b = 32, c = 0, oom_above = 0;
  std::string fail, record;
  bool step_records = false;
};

bool Number(const char* text, double& out) {
  char* end = nullptr;
  out = std::strtod(text, &end);
  return end != text && *end == '\0' && out >= 0 && out < 1e9;
}

int Usage(const char* why) {
  std::fprintf(stderr, "fake_trainer: %s (see the header of tests/tools/fake_trainer.cc)\n", why);
  return 2;
}

double Clock(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// One "headroom.step/1" step record (samples/companion_records.h) with the peak RSS so far.
void AppendStepRecord(long step) {
  const char* path = std::getenv("HEADROOM_STEP_RECORDS");
  if (path == nullptr || *path == '\0') return;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  char line[512];
  const int n =
      std::snprintf(line, sizeof line,
                    "{\"schema\":\"headroom.step/1\",\"kind\":\"step\",\"pid\":%ld,\"wall\":%.6f,"
                    "\"mono\":%.6f,\"step\":%ld,\"host_peak_rss_bytes\":%lld}\n",
                    static_cast<long>(getpid()), Clock(CLOCK_REALTIME), Clock(CLOCK_MONOTONIC),
                    step, static_cast<long long>(usage.ru_maxrss) * 1024);
  const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0 || n <= 0) return;
  [[maybe_unused]] ssize_t w = write(fd, line, static_cast<size_t>(n));
  close(fd);
}

void SleepForever(long timeout_s) {
  std::this_thread::sleep_for(std::chrono::seconds(timeout_s));
  _exit(3);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--step-records") {
      o.step_records = true;
      continue;
    }
    if (i + 1 >= argc) return Usage(("missing value for " + flag).c_str());
    const char* v = argv[++i];
    double d = 0;
    if (flag == "--fail") {
      o.fail = v;
      if (o.fail != "oom" && o.fail != "error" && o.fail != "hang")
        return Usage("--fail: oom, error or hang");
      continue;
    }
    if (flag == "--record") {
      o.record = v;
      continue;
    }
    if (!Number(v, d)) return Usage(("bad number for " + flag).c_str());
    if (flag == "--batch")
      o.batch = static_cast<long>(d);
    else if (flag == "--seq")
      o.seq = static_cast<long>(d);
    else if (flag == "--seq-ref")
      o.seq_ref = static_cast<long>(d);
    else if (flag == "--a")
      o.a = d;
    else if (flag == "--b")
      o.b = d;
    else if (flag == "--c")
      o.c = d;
    else if (flag == "--hold")
      o.hold_ms = static_cast<long>(d);
    else if (flag == "--children")
      o.children = static_cast<long>(d);
    else if (flag == "--timeout")
      o.timeout_s = static_cast<long>(d);
    else if (flag == "--fail-at")
      o.fail_at = static_cast<long>(d);
    else if (flag == "--oom-above")
      o.oom_above = d;
    else
      return Usage(("unknown flag " + flag).c_str());
  }
  if (o.seq_ref <= 0 || o.timeout_s <= 0) return Usage("--seq-ref and --timeout must be positive");
  alarm(static_cast<unsigned>(o.timeout_s));  // the default SIGALRM action ends the process

  if (!o.record.empty()) {
    const int fd = open(o.record.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      const std::string line = "batch=" + std::to_string(o.batch) +
                               " seq=" + std::to_string(o.seq) +
                               " pid=" + std::to_string(getpid()) + "\n";
      [[maybe_unused]] ssize_t n = write(fd, line.data(), line.size());
      close(fd);
    }
  }
  const double bt = static_cast<double>(o.batch);
  const double mib = (o.a + o.b * bt + o.c * bt * bt) * static_cast<double>(o.seq) /
                     static_cast<double>(o.seq_ref);
  const bool failing = !o.fail.empty() && o.batch >= o.fail_at;
  std::printf("fake_trainer: batch %ld seq %ld: %.0f MiB\n", o.batch, o.seq, mib);
  std::fflush(stdout);
  if ((failing && o.fail == "oom") || (o.oom_above > 0 && mib > o.oom_above)) {
    std::fprintf(stderr,
                 "Traceback (most recent call last):\n  File \"train.py\", line 42, in <module>\n"
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB.\n",
                 mib / 1024);
    return 1;
  }
  if (failing && o.fail == "error") {
    std::fprintf(stderr, "ValueError: dataset has fewer than %ld examples\n", o.batch);
    return 1;
  }
  if (mib > kMaxMiB) return Usage("more than 8 GiB asked: scale the test down");
  const size_t bytes = static_cast<size_t>(mib * 1024 * 1024);
  if (bytes > 0) {
    // MAP_POPULATE: the kernel allocates and zeroes every page in one call, about 12x
    // faster than touching them from here on this VM (0.33 s against 4.7 s for 800 MiB),
    // so a trial's peak is short to reach and other processes have less time to move
    // MemAvailable under it. Then one write per page, in case populate was cut short.
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) {
      std::fprintf(stderr, "fake_trainer: mmap: %s\n", std::strerror(errno));
      return 1;
    }
    const long page = sysconf(_SC_PAGESIZE);
    for (size_t off = 0; off < bytes; off += static_cast<size_t>(page))
      static_cast<volatile char*>(p)[off] = 1;
  }
  if (failing && o.fail == "hang") {
    for (long i = 0; i < o.children; ++i) {
      if (fork() == 0) {
        setsid();  // escapes the process group: only the guard's tree walk or cgroup finds it
        if (!o.record.empty()) {
          const int fd = open(o.record.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
          const std::string line = "child pid=" + std::to_string(getpid()) + "\n";
          if (fd >= 0) {
            [[maybe_unused]] ssize_t n = write(fd, line.data(), line.size());
            close(fd);
          }
        }
        SleepForever(o.timeout_s);
      }
    }
    SleepForever(o.timeout_s);
  }
  if (o.step_records) AppendStepRecord(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(o.hold_ms));
  if (o.step_records) AppendStepRecord(1);
  std::printf("fake_trainer: done\n");
  return 0;
}
