// Implementation notes.
//  - Reasons, in this order: MemAvailable under the level ("memavailable"); the projected
//    time to the level under two periods ("projected", the guard acts before the crossing);
//    the --psi-kill trigger ("psi"). Severe (SIGKILL at once): below half the level, or a fall
//    rate that would empty the pool within the grace.
//  - The projection looks at most 200 ms ahead (two of the 100 ms periods the guard used to
//    cap its sleep at): after a long sleep far from the level the EWMA is an average over
//    that sleep, not a fill rate to kill on, and the next period is 10 ms anyway once memory
//    falls faster than 1 GB/s.
//  - Period: 10 ms near the level (within twice it), when memory falls faster than 1 GB/s, or
//    once a signal went out (guard_peers.md section 6: a 10 ms poller fired 2-14 ms after the
//    crossing at up to 20 GB/s). Farther away, the time a fill at kCredibleFillBytesPerSecond
//    needs to reach the level, capped at 1 s: a sleep ends no later than any fill of up to
//    20 GB/s that began with it reaches the level, and the wakeup after it sees the fall (over
//    1 GB/s), projects the crossing and switches to 10 ms. A fill at the fastest rate measured
//    here (16.6 GB/s) is seen with a sixth of the distance still to go. It was half that time
//    until 2026-12-02, which doubled the wakeups of an idle guard for a margin (fills of 20-40
//    GB/s) that no measurement here or published for the GB10 needs (docs/guard-benchmark.md).
//    earlyoom sleeps the whole time a 6 GB/s fill would need, capped at 1 s (main.c
//    sleep_time_ms).
#include "run/kill_policy.h"

#include <algorithm>
#include <cmath>
#include <csignal>

namespace headroom {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kMinPeriod{10};
constexpr milliseconds kMaxFarPeriod{1000};
constexpr double kMaxProjectionSeconds = 0.2;

double Seconds(milliseconds d) { return std::chrono::duration<double>(d).count(); }

bool Near(const GuardState& s, const GuardReading& r, const KillPolicyOptions& o) {
  return s.fall_rate_bytes_per_s > kFastFallBytesPerSecond ||
         r.available_bytes < 2 * o.min_available_bytes;
}

}  // namespace

void KillPolicy::Observe(GuardState& s, const GuardReading& r) {
  const double dt = r.now_s - s.last_reading_s;
  if (dt > 0) {
    const double fallen =
        static_cast<double>(s.last_available_bytes) - static_cast<double>(r.available_bytes);
    s.fall_rate_bytes_per_s = 0.5 * s.fall_rate_bytes_per_s + 0.5 * fallen / dt;
  }
  s.last_available_bytes = r.available_bytes;
  s.last_reading_s = r.now_s;
}

milliseconds KillPolicy::NextPeriod(const GuardState& s, const GuardReading& r,
                                    const KillPolicyOptions& o) {
  if (s.triggered || s.cleanup || Near(s, r, o)) return kMinPeriod;
  const double to_level_s =
      (static_cast<double>(r.available_bytes) - static_cast<double>(o.min_available_bytes)) /
      kCredibleFillBytesPerSecond;
  milliseconds cap = std::min(std::max(o.max_period, kMinPeriod), kMaxFarPeriod);
  if (o.tick_period) cap = std::min(cap, std::max(*o.tick_period, kMinPeriod));
  if (o.timeout && !s.timed_out) {
    // Wake for the timeout on time, not up to a whole far period after it.
    const double left_s = s.start_s + Seconds(*o.timeout) - r.now_s;
    const auto left = milliseconds(static_cast<int64_t>(std::ceil(std::max(0.0, left_s) * 1000)));
    cap = std::min(cap, std::max(left, kMinPeriod));
  }
  const auto far = milliseconds(static_cast<int64_t>(to_level_s * 1000));
  return std::clamp(far, kMinPeriod, cap);
}

KillDecision KillPolicy::Decide(const GuardState& s, const GuardReading& r,
                                const KillPolicyOptions& o) {
  KillDecision d;
  d.next_period = NextPeriod(s, r, o);
  if (!r.job_running && r.tree_empty) {
    d.action = GuardAction::kDone;
    return d;
  }
  const double rate = s.fall_rate_bytes_per_s;
  if (!s.triggered && r.job_running) {
    const double level = static_cast<double>(o.min_available_bytes);
    const double headroom = static_cast<double>(r.available_bytes) - level;
    const double horizon_s = std::min(2.0 * Seconds(s.period), kMaxProjectionSeconds);
    if (r.available_bytes < o.min_available_bytes)
      d.reason = "memavailable";
    else if (rate > 0 && headroom / rate < horizon_s)
      d.reason = "projected";
    else if (r.psi_full)
      d.reason = "psi";
    if (!d.reason.empty()) {
      d.action = GuardAction::kTrigger;
      d.severe = r.available_bytes < o.min_available_bytes / 2 ||
                 (rate > 0 && static_cast<double>(r.available_bytes) / rate < Seconds(o.grace));
      d.signal = d.severe ? SIGKILL : SIGTERM;
      return d;
    }
  }
  if (o.timeout && !s.triggered && !s.timed_out && r.job_running &&
      r.now_s - s.start_s >= Seconds(*o.timeout)) {
    d.action = GuardAction::kTimeout;
    d.signal = SIGTERM;
    return d;
  }
  // Escalation: on time, or at once when memory keeps falling below half the level.
  if ((s.triggered || s.cleanup) && !s.killed_hard &&
      (r.now_s >= s.deadline_s || (s.triggered && r.available_bytes < o.min_available_bytes / 2))) {
    d.action = GuardAction::kEscalate;
    d.signal = SIGKILL;
    return d;
  }
  // The job exited and left processes behind (data-loader workers, daemons): they belong to
  // the job and hold the pool, so they go too.
  if (!r.job_running && !s.triggered && !s.cleanup) {
    d.action = GuardAction::kCleanup;
    d.signal = SIGTERM;
    return d;
  }
  return d;
}

void KillPolicy::Apply(GuardState& s, const KillDecision& d, const GuardReading& r,
                       const KillPolicyOptions& o) {
  switch (d.action) {
    case GuardAction::kTrigger:
      s.triggered = true;
      s.killed_hard = d.severe;
      break;
    case GuardAction::kTimeout:
      s.timed_out = true;
      s.cleanup = true;
      break;
    case GuardAction::kCleanup:
      s.cleanup = true;
      break;
    case GuardAction::kEscalate:
      s.killed_hard = true;
      return;
    case GuardAction::kNone:
      s.period = d.next_period;
      return;
    case GuardAction::kDone:
      return;
  }
  // A SIGTERM (or a severe trigger's SIGKILL) went out now: the grace starts.
  s.term_s = r.now_s;
  s.deadline_s = r.now_s + Seconds(o.grace);
}

}  // namespace headroom
