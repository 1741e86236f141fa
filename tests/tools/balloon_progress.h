// The balloon's progress record (tests/tools/balloon.cc, --progress FILE), shared with the
// C++ tests that read it; a Python harness reads the same bytes with struct.unpack.
//
// Version 1. Native byte order (little-endian on x86-64 and aarch64). Every field is a
// uint64 at the offset shown, written atomically: a reader may tear between two fields,
// never inside one. Size 4096 + 16 * 4096 = 69632 bytes. Python: the header is
// struct.unpack_from("<8s11Q", data, 0); log entry i is "<2Q" at 4096 + 16 * (i % 4096).
//      0  magic: the bytes "BALLOON\0"
//      8  version: 1, written last during setup; 0 = not ready yet; other = refuse the file
//     16  cap_bytes: what the whole tree will touch (sum of the worker shares, <= --cap)
//     24  bytes: cumulative bytes touched by all workers
//     32  t_ns: CLOCK_MONOTONIC ns of the latest update of `bytes`
//     40  t_start_ns: when the balloon started (before any fork)
//     48  t_cap_ns: when `bytes` reached cap_bytes; 0 until then
//     56  t_term_ns: when the first SIGTERM was caught by any balloon process; 0 if none
//     64  bytes_term: `bytes` at t_term_ns (stored just after t_term_ns, by the same process)
//     72  workers: processes that allocate (1, or N with --children N)
//     80  log_count: entries appended to the log so far (may exceed log_capacity)
//     88  log_capacity: 4096
//   4096  log: entry i lives at 4096 + 16 * (i % log_capacity) as {t_ns, bytes}, one per
//         chunk: the total after that chunk and when. t_ns is stored after bytes; an entry
//         with t_ns == 0 is not written yet. 4096 chunks of 4 MiB cover 16 GiB without wrap.
// CLOCK_MONOTONIC is Python's time.monotonic_ns(), so (t, bytes) lines up with a sampler.
#pragma once

#include <cstddef>
#include <cstdint>

namespace balloon {

inline constexpr uint64_t kProgressVersion = 1;
inline constexpr size_t kLogOffset = 4096, kLogCapacity = 4096;

struct ProgressHeader {
  char magic[8];
  uint64_t version, cap_bytes, bytes, t_ns, t_start_ns, t_cap_ns, t_term_ns, bytes_term, workers,
      log_count, log_capacity;
};
struct LogEntry {
  uint64_t t_ns, bytes;
};

inline constexpr size_t kProgressFileBytes = kLogOffset + kLogCapacity * sizeof(LogEntry);
static_assert(offsetof(ProgressHeader, bytes) == 24 &&
              offsetof(ProgressHeader, log_capacity) == 88);
static_assert(sizeof(ProgressHeader) <= kLogOffset && sizeof(LogEntry) == 16);

}  // namespace balloon
