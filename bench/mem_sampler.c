// mem_sampler: the ground-truth instrument of bench/guard_reaction.py (docs/sources.md section 3).
//
// Samples MemAvailable and AnonPages from /proc/meminfo every PERIOD_US microseconds
// (default 1000) into a MAP_SHARED file, until SIGTERM/SIGINT or MAX_SECONDS. The harness
// compiles it with `cc -O2` on first use; it is not part of the CMake build.
//
//   mem_sampler OUT_FILE [PERIOD_US] [MAX_SECONDS]
//
// Prints "ready" on stdout after the first sample is stored. Exits 0.
//
// File layout, version 1, native byte order (little-endian here), all fields uint64:
//      0  magic "MEMSAMP\0"
//      8  version: 1
//     16  count: samples stored so far (stored after each record, release order)
//     24  capacity: records the file holds
//     32  period_ns
//     40  late: samples whose wakeup came more than one period late (scheduling delay)
//     48  realtime: 1 if the sampler runs SCHED_FIFO, 0 if at nice -15 (or plain)
//     64  records: {t_ns (CLOCK_MONOTONIC), mem_available_kib, anon_pages_kib}, 24 bytes each
//
// The sampler mlocks itself, asks for SCHED_FIFO priority 1 (else nice -15), reads
// /proc/meminfo with pread on a descriptor opened once (about 5 us), and sleeps with
// clock_nanosleep(TIMER_ABSTIME). A late wakeup does not cause a burst of catch-up samples.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct Header {
  char magic[8];
  uint64_t version, count, capacity, period_ns, late, realtime, reserved;
};
struct Record {
  uint64_t t_ns, avail_kib, anon_kib;
};

static volatile sig_atomic_t g_stop = 0;
static void on_signal(int sig) {
  (void)sig;
  g_stop = 1;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// Value in kB of "Key:" in a meminfo buffer; UINT64_MAX if absent.
static uint64_t field(const char* buf, const char* key) {
  const char* p = strstr(buf, key);
  if (!p) return UINT64_MAX;
  p += strlen(key);
  while (*p == ' ') p++;
  uint64_t v = 0;
  while (*p >= '0' && *p <= '9') v = v * 10 + (uint64_t)(*p++ - '0');
  return v;
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4 || strcmp(argv[1], "--help") == 0) {
    fprintf(stderr, "usage: mem_sampler OUT_FILE [PERIOD_US=1000] [MAX_SECONDS=120]\n");
    return 2;
  }
  const long period_us = argc > 2 ? atol(argv[2]) : 1000;
  const long max_s = argc > 3 ? atol(argv[3]) : 120;
  if (period_us < 100 || period_us > 1000000 || max_s < 1 || max_s > 3600) {
    fprintf(stderr, "mem_sampler: period 100..1000000 us, max 1..3600 s\n");
    return 2;
  }
  const uint64_t period_ns = (uint64_t)period_us * 1000;
  const uint64_t capacity = (uint64_t)max_s * 1000000000ull / period_ns + 16;
  const size_t size = 64 + capacity * sizeof(struct Record);

  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
    perror("mem_sampler: output");
    return 1;
  }
  struct Header* h = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (h == MAP_FAILED) {
    perror("mem_sampler: mmap");
    return 1;
  }
  struct Record* rec = (struct Record*)((char*)h + 64);
  memcpy(h->magic, "MEMSAMP", 8);
  h->capacity = capacity;
  h->period_ns = period_ns;
  __atomic_store_n(&h->version, 1, __ATOMIC_RELEASE);

  int mi = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
  if (mi < 0) {
    perror("mem_sampler: /proc/meminfo");
    return 1;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  // SCHED_FIFO 1 when permitted (CAP_SYS_NICE): a 1 ms sampler on a busy 2-core box is
  // otherwise delayed by several ms exactly when the balloon exits. It runs ~10 us per ms.
  struct sched_param sp = {.sched_priority = 1};
  const int rt = sched_setscheduler(0, SCHED_FIFO, &sp) == 0;
  if (!rt) (void)setpriority(PRIO_PROCESS, 0, -15);
  h->realtime = rt ? 1 : 0;
  // Pre-fault the whole output file so a sample never waits on a page fault, then lock.
  for (size_t off = 0; off < size; off += 4096) ((volatile char*)h)[off] = ((volatile char*)h)[off];
  (void)mlockall(MCL_CURRENT | MCL_FUTURE);

  char buf[8192];
  const uint64_t t0 = now_ns();
  uint64_t next = t0;
  uint64_t n = 0, late = 0;
  while (!g_stop && n < capacity) {
    ssize_t got = pread(mi, buf, sizeof buf - 1, 0);
    const uint64_t t = now_ns();
    if (got <= 0) break;
    buf[got] = '\0';
    rec[n].t_ns = t;
    rec[n].avail_kib = field(buf, "MemAvailable:");
    rec[n].anon_kib = field(buf, "AnonPages:");
    n++;
    __atomic_store_n(&h->count, n, __ATOMIC_RELEASE);
    if (n == 1) {
      printf("ready\n");
      fflush(stdout);
    }
    if (t - t0 >= (uint64_t)max_s * 1000000000ull) break;
    next += period_ns;
    const uint64_t after = now_ns();
    if (after > next + period_ns) {  // more than a period late: count it, do not burst
      late++;
      __atomic_store_n(&h->late, late, __ATOMIC_RELAXED);
      next = after;
      continue;
    }
    struct timespec ts = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !g_stop) {
    }
  }
  msync(h, size, MS_SYNC);
  return 0;
}
