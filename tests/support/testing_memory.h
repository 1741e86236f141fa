// Test helpers (tests only): this machine's MemAvailable, read as the guard reads it, for
// tests that set kill levels relative to it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

#include "sys/meminfo.h"
#include "sys/sysroot.h"

namespace headroom::testing {

// The pool of the flag tests' arithmetic: a 128 GiB machine (levels given as a percentage).
inline constexpr uint64_t kTotalPool = 128ULL << 30;

// MemAvailable now, in bytes; 0 when /proc/meminfo cannot be read.
inline uint64_t AvailableNow() {
  auto info = ReadMemInfo(SysRoot("/"));
  return info && info->available_bytes() ? *info->available_bytes() : 0;
}

// MemTotal, in bytes; 0 when /proc/meminfo cannot be read.
inline uint64_t TotalNow() {
  auto info = ReadMemInfo(SysRoot("/"));
  return info && info->total_bytes() ? *info->total_bytes() : 0;
}

// A kill level MemAvailable is already below, so a guard acts at its first reading: 1 GiB above
// MemAvailable, kept 128 MiB under MemTotal (a level at or above MemTotal is refused, exit 2:
// docs/guard.md "Levels"; on a quiet machine MemAvailable + 1 GiB can be past MemTotal).
inline uint64_t CrossedLevelBytes() {
  const uint64_t now = AvailableNow();
  const uint64_t total = TotalNow();
  return std::min(now + (1ULL << 30), total > (128ULL << 20) ? total - (128ULL << 20) : 0);
}

// MemAvailable once it has stopped rising: less than 32 MiB over a whole second, for at most
// 10 s. A second, not a quarter: memory coming back slowly (a previous test's tree torn down
// on a loaded machine, seen in CI at about 85 MB/s) passes a 250 ms test while adding more
// than a gigabyte over the next test's 20 s.
inline uint64_t SettledAvailable() {
  uint64_t before = AvailableNow();
  for (int i = 0; i < 10; ++i) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const uint64_t now = AvailableNow();
    if (now <= before + (32ULL << 20)) return now;
    before = now;
  }
  return before;
}

}  // namespace headroom::testing
