// The fixed cadence `top` samples on, as watch's: the next sample is due `interval` after
// the last one was due, so a slow draw does not stretch the period. Interactive top skips
// the slots it overran (a stopped terminal, ^Z) instead of sampling to catch up. Pure: the
// caller passes the clock's readings in.
#pragma once

#include <chrono>

namespace headroom {

// The shortest --interval, as watch's: a sample costs well under a millisecond, but NVML's
// power is a 1 s average and its utilization a 1/6-1 s window; faster adds nothing.
inline constexpr std::chrono::milliseconds kMinTopInterval{100};

class SampleCadence {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  SampleCadence(std::chrono::milliseconds interval, TimePoint start)
      : interval_(interval), next_(start) {}

  bool Due(TimePoint now) const { return now >= next_; }
  // One slot on; with `skip_overrun`, a slot already past at `now` is skipped to now +
  // interval.
  void Advance(TimePoint now, bool skip_overrun);
  // How long until the next sample, whole milliseconds rounded up, never negative.
  std::chrono::milliseconds WaitFrom(TimePoint now) const;
  TimePoint next() const { return next_; }

 private:
  std::chrono::milliseconds interval_;
  TimePoint next_;
};

}  // namespace headroom
