// A clock's reading in seconds (CLOCK_MONOTONIC for deadlines and the companion's "mono"
// stamps, CLOCK_BOOTTIME for /proc's start times, which count time suspended).
#pragma once

#include <time.h>

namespace headroom {

inline double ClockSeconds(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace headroom
