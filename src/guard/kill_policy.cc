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
//    once a signal went out (docs/sources.md section 2: a 10 ms poller fired 2-14 ms after the
//    crossing at up to 20 GB/s). Farther away, the time a fill at kCredibleFillBytesPerSecond
//    needs to reach the level, capped at 1 s: a sleep ends no later than any fill of up to
//    20 GB/s that began with it reaches the level, and the wakeup after it sees the fall (over
//    1 GB/s), projects the crossing and switches to 10 ms. A fill at the fastest rate measured
//    here (16.6 GB/s) is seen with a sixth of the distance still to go. It was half that time
//    until 2026-12-02, which doubled the wakeups of an idle guard for a margin (fills of 20-40
//    GB/s) that no measurement here or published for the GB10 needs (docs/guard-benchmark.md).
//    earlyoom sleeps the whole time a 6 GB/s fill would need, capped at 1 s (main.c
//    sleep_time_ms).
//  - After a memory reason's SIGTERM a job that keeps filling the pool (it ignores SIGTERM, or
//    is blocked in a driver call, as a PyTorch process in a CUDA call is) gets SIGKILL at the
//    level (or when the projection puts the level within the horizon), not at the end of the
//    grace: at 1 GB/s a 1 s grace let MemAvailable end 415-429 MiB below the level (issue 16).
//    "Still filling": the last reading fell, MemAvailable is 16 MiB or more below the
//    SIGTERM's reading and has fallen at 500 MB/s or more on average since, and at the fall
//    rate the grace would end more than 64 MiB below the level. A job that stopped allocating
//    when asked keeps its grace, through MemAvailable's late fall after a fill stops and
//    while the rest of the machine drifts it down (about 60 MB/s seen during builds here).
//  - A rate needs time between its two readings: a reading less than kMinRateSeconds after
//    the reference one (the last that made a rate) folds nothing into the EWMA and leaves the
//    reference where it was, so the next rate spans the whole interval. A guard woken again
//    and again within microseconds (a listener at the descriptor limit, issue 29) divided a few
//    hundred KiB of MemAvailable's jitter by microseconds: 1.4e11-9.6e11 B/s, "projected", and
//    a SIGKILL with 21 GiB free against a 64 MiB level.
//  - Signals to the guard: each INT/TERM/HUP/QUIT is passed on to the job (guard/guard.cc); a
//    second one once the grace since the first has run out is SIGKILL, so a user's repeated
//    SIGTERM ends a job that ignores it.
#include "guard/kill_policy.h"

#include <algorithm>
#include <cmath>
#include <csignal>

namespace headroom {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kMinPeriod{10};
constexpr milliseconds kMaxFarPeriod{1000};
constexpr double kMaxProjectionSeconds = 0.2;
// The shortest interval a fall rate is taken over: half the shortest period, so every
// reading the loop takes on time (10 ms apart at the least) makes one, and an early wakeup
// (a signal, group traffic, a listener that cannot accept) does not.
constexpr double kMinRateSeconds = 0.005;
// How far MemAvailable may fall after a memory reason's SIGTERM before the job counts as
// still filling the pool: other processes move MemAvailable by a few MiB too, and a job that
// handles SIGTERM may allocate a little on its way out.
constexpr double kStillFillingSlackBytes = 16.0 * (1 << 20);
// How far below the level a job that keeps filling may take MemAvailable before the grace
// ends (issue 16's target at 1 GB/s): a fall that the projection puts deeper is SIGKILLed at
// the level.
constexpr double kOvershootBudgetBytes = 64.0 * (1 << 20);
// The fall since the SIGTERM, averaged, that counts as the job still filling: half the fast
// fall. MemAvailable goes on falling for 100-200 ms after a fill stops (the pages the fill
// took from the per-CPU lists are taken back from the free count late, docs/guard-benchmark.md
// "Notes"), at about 200 MB/s averaged after a 512 MB/s fill here.
constexpr double kStillFillingBytesPerSecond = kFastFallBytesPerSecond / 2;

double Seconds(milliseconds d) { return std::chrono::duration<double>(d).count(); }

bool Near(const GuardState& s, const GuardReading& r, const KillPolicyOptions& o) {
  return s.fall_rate_bytes_per_s > kFastFallBytesPerSecond ||
         r.available_bytes < 2 * o.min_available_bytes;
}

double Horizon(const GuardState& s) {
  return std::min(2.0 * Seconds(s.period), kMaxProjectionSeconds);
}

// After a memory reason's SIGTERM: the job still fills the pool (the last reading fell, and
// MemAvailable is more than the slack below the SIGTERM's reading) and is at the level or
// projected to reach it within the horizon.
bool StillFillingAtTheLevel(const GuardState& s, const GuardReading& r,
                            const KillPolicyOptions& o) {
  if (!s.triggered || s.killed_hard || s.last_fall_bytes <= 0) return false;
  const double available = static_cast<double>(r.available_bytes);
  const double fallen = static_cast<double>(s.term_available_bytes) - available;
  if (fallen < kStillFillingSlackBytes || r.now_s <= s.term_s ||
      fallen / (r.now_s - s.term_s) < kStillFillingBytesPerSecond) {
    return false;
  }
  // At this rate the grace would end more than the budget below the level: it is a fill, not
  // the rest of the machine drifting (a build, a cache) while the job shuts down.
  const double level = static_cast<double>(o.min_available_bytes);
  const double rate = s.fall_rate_bytes_per_s;
  if (rate <= 0 || available - rate * (s.deadline_s - r.now_s) >= level - kOvershootBudgetBytes) {
    return false;
  }
  return available <= level || (available - level) / rate < Horizon(s);
}

// The reason to escalate to SIGKILL at this reading, or none.
std::string_view EscalationReason(const GuardState& s, const GuardReading& r,
                                  const KillPolicyOptions& o) {
  if (s.killed_hard) return {};
  if (s.triggered || s.cleanup) {
    if (r.now_s >= s.deadline_s) return "grace";
    if (s.triggered && r.available_bytes < o.min_available_bytes / 2) return "half";
    if (StillFillingAtTheLevel(s, r, o)) return "crossing";
  }
  if (s.forwards >= 2 && r.now_s >= s.first_forward_s + Seconds(o.grace)) return "repeated";
  return {};
}

}  // namespace

void KillPolicy::Observe(GuardState& s, const GuardReading& r) {
  const double dt = r.now_s - s.last_reading_s;
  if (dt < kMinRateSeconds) return;  // too close to the reference reading to make a rate
  const double fallen =
      static_cast<double>(s.last_available_bytes) - static_cast<double>(r.available_bytes);
  s.fall_rate_bytes_per_s = 0.5 * s.fall_rate_bytes_per_s + 0.5 * fallen / dt;
  s.last_fall_bytes =
      static_cast<int64_t>(s.last_available_bytes) - static_cast<int64_t>(r.available_bytes);
  s.last_available_bytes = r.available_bytes;
  s.last_reading_s = r.now_s;
}

milliseconds KillPolicy::NextPeriod(const GuardState& s, const GuardReading& r,
                                    const KillPolicyOptions& o) {
  if (s.triggered || s.cleanup || Near(s, r, o)) return kMinPeriod;
  if (s.forwards >= 2 && !s.killed_hard) return kMinPeriod;  // a repeated signal's grace
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
  // The group's second step comes first: the agent hears of it whatever else is due.
  if (s.term_rest_s > 0 && r.now_s >= s.term_rest_s && !s.killed_hard) {
    d.action = GuardAction::kTermRest;
    d.signal = SIGTERM;
    return d;
  }
  if (!r.job_running && r.tree_empty) {
    d.action = GuardAction::kDone;
    return d;
  }
  const double rate = s.fall_rate_bytes_per_s;
  if (!s.triggered && r.job_running) {
    const double level = static_cast<double>(o.min_available_bytes);
    const double headroom = static_cast<double>(r.available_bytes) - level;
    const double horizon_s = Horizon(s);
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
  // Escalation: on time, or at once when memory keeps falling below half the level or the job
  // keeps filling the pool up to the level, or when the guard was asked twice.
  if (const auto why = EscalationReason(s, r, o); !why.empty()) {
    d.action = GuardAction::kEscalate;
    d.signal = SIGKILL;
    d.reason = why;
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

void KillPolicy::Forwarded(GuardState& s, double now_s) {
  if (s.forwards++ == 0) s.first_forward_s = now_s;
  if (!s.triggered && !s.cleanup && s.forwards == 1) s.term_s = now_s;
}

void KillPolicy::GroupEnded(GuardState& s, double now_s, bool workers_first,
                            const KillPolicyOptions& o) {
  s.cleanup = true;
  s.term_s = now_s;
  s.deadline_s = now_s + (workers_first ? 2 : 1) * Seconds(o.grace);
  if (workers_first) s.term_rest_s = now_s + Seconds(o.grace);
}

void KillPolicy::WorkersFirst(GuardState& s, double now_s, const KillPolicyOptions& o) {
  s.term_rest_s = now_s + Seconds(o.grace);
}

void KillPolicy::Apply(GuardState& s, const KillDecision& d, const GuardReading& r,
                       const KillPolicyOptions& o) {
  switch (d.action) {
    case GuardAction::kTermRest:
      s.term_rest_s = 0;
      return;
    case GuardAction::kTrigger:
      s.triggered = true;
      s.killed_hard = d.severe;
      s.term_available_bytes = r.available_bytes;
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
