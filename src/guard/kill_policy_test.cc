#include "guard/kill_policy.h"

#include <gtest/gtest.h>

#include <csignal>
#include <vector>

#include "base/bytes.h"

namespace headroom {
namespace {

using std::chrono::milliseconds;

KillPolicyOptions PolicyOptions() {
  KillPolicyOptions o;
  o.min_available_bytes = 4 * kGiB;
  o.grace = milliseconds(3000);
  return o;
}

// A guard that started at t = 100 s with 100 GiB available, last read at t = 100 s.
GuardState State(uint64_t last_available = 100 * kGiB) {
  GuardState s;
  s.start_s = 100;
  s.last_available_bytes = last_available;
  s.last_reading_s = 100;
  return s;
}

GuardReading Reading(double now_s, uint64_t available) {
  GuardReading r;
  r.now_s = now_s;
  r.available_bytes = available;
  return r;
}

TEST(KillPolicy, ObserveFoldsTheFallIntoAnEwma) {
  GuardState s = State(10 * kGiB);
  KillPolicy::Observe(s, Reading(100.5, 9 * kGiB));  // 1 GiB in 0.5 s: 2 GiB/s
  EXPECT_DOUBLE_EQ(s.fall_rate_bytes_per_s, 0.5 * 2.0 * kGiB);
  EXPECT_EQ(s.last_available_bytes, 9 * kGiB);
  EXPECT_DOUBLE_EQ(s.last_reading_s, 100.5);
  KillPolicy::Observe(s, Reading(101.0, 9 * kGiB));  // still: the rate halves
  EXPECT_DOUBLE_EQ(s.fall_rate_bytes_per_s, 0.25 * 2.0 * kGiB);
  KillPolicy::Observe(s, Reading(101.0, 8 * kGiB));  // no time passed: the rate stays
  EXPECT_DOUBLE_EQ(s.fall_rate_bytes_per_s, 0.25 * 2.0 * kGiB);
}

TEST(KillPolicy, NothingToDoFarFromTheLevel) {
  const auto d = KillPolicy::Decide(State(), Reading(100.01, 100 * kGiB), PolicyOptions());
  EXPECT_EQ(d.action, GuardAction::kNone);
  EXPECT_EQ(d.signal, 0);
  EXPECT_TRUE(d.reason.empty());
}

TEST(KillPolicy, BelowTheLevelIsSigtermWithTheGrace) {
  GuardState s = State();
  const auto r = Reading(100.01, 4 * kGiB - 1);
  const auto d = KillPolicy::Decide(s, r, PolicyOptions());
  EXPECT_EQ(d.action, GuardAction::kTrigger);
  EXPECT_EQ(d.reason, "memavailable");
  EXPECT_EQ(d.signal, SIGTERM);
  EXPECT_FALSE(d.severe);
  KillPolicy::Apply(s, d, r, PolicyOptions());
  EXPECT_TRUE(s.triggered);
  EXPECT_FALSE(s.killed_hard);
  EXPECT_DOUBLE_EQ(s.term_s, 100.01);
  EXPECT_DOUBLE_EQ(s.deadline_s, 103.01);
  // Triggered once: no second trigger, and the period is 10 ms.
  const auto again = KillPolicy::Decide(s, Reading(100.02, 4 * kGiB - 1), PolicyOptions());
  EXPECT_EQ(again.action, GuardAction::kNone);
  EXPECT_EQ(again.next_period, milliseconds(10));
}

TEST(KillPolicy, BelowHalfTheLevelIsSigkillAtOnce) {
  const auto d = KillPolicy::Decide(State(), Reading(100.01, 2 * kGiB - 1), PolicyOptions());
  EXPECT_EQ(d.action, GuardAction::kTrigger);
  EXPECT_EQ(d.reason, "memavailable");
  EXPECT_EQ(d.signal, SIGKILL);
  EXPECT_TRUE(d.severe);
}

TEST(KillPolicy, AFallThatWouldEmptyThePoolWithinTheGraceIsSigkillAtOnce) {
  GuardState s = State();
  s.fall_rate_bytes_per_s = 2.0 * kGiB;  // 3 GiB left empties in 1.5 s < the 3 s grace
  const auto d = KillPolicy::Decide(s, Reading(100.01, 3 * kGiB), PolicyOptions());
  EXPECT_EQ(d.reason, "memavailable");
  EXPECT_TRUE(d.severe);
  EXPECT_EQ(d.signal, SIGKILL);
  GuardState after = s;
  KillPolicy::Apply(after, d, Reading(100.01, 3 * kGiB), PolicyOptions());
  EXPECT_TRUE(after.killed_hard);
  // Already killed hard: no escalation follows.
  EXPECT_EQ(KillPolicy::Decide(after, Reading(104, 3 * kGiB), PolicyOptions()).action,
            GuardAction::kNone);
}

TEST(KillPolicy, AProjectedCrossingWithinTwoPeriodsActsBeforeIt) {
  GuardState s = State();
  s.period = milliseconds(10);
  s.fall_rate_bytes_per_s = 10e9;  // 10 GB/s
  // 150 MB above the level: 15 ms at 10 GB/s, under two 10 ms periods.
  const uint64_t level = 4 * kGiB;
  auto d = KillPolicy::Decide(s, Reading(100.01, level + 150'000'000), PolicyOptions());
  EXPECT_EQ(d.action, GuardAction::kTrigger);
  EXPECT_EQ(d.reason, "projected");
  // 4 GiB + 150 MB at 10 GB/s empties in about 0.45 s, within the grace: severe.
  EXPECT_TRUE(d.severe);
  // 250 MB above: 25 ms away, more than two periods: not yet.
  d = KillPolicy::Decide(s, Reading(100.01, level + 250'000'000), PolicyOptions());
  EXPECT_EQ(d.action, GuardAction::kNone);
  EXPECT_EQ(d.next_period, milliseconds(10));  // falling faster than 1 GB/s
}

TEST(KillPolicy, AProjectionSlowerThanTheGraceIsSigterm) {
  GuardState s = State();
  s.period = milliseconds(100);
  s.fall_rate_bytes_per_s = 1e9;
  // 150 MB above the level at 1 GB/s: 150 ms, under two 100 ms periods; the pool would
  // empty in about 4.4 s, longer than the 3 s grace.
  const auto d = KillPolicy::Decide(s, Reading(100.1, 4 * kGiB + 150'000'000), PolicyOptions());
  EXPECT_EQ(d.reason, "projected");
  EXPECT_FALSE(d.severe);
  EXPECT_EQ(d.signal, SIGTERM);
}

TEST(KillPolicy, TheProjectionLooksNoFurtherThan200Ms) {
  GuardState s = State();
  s.period = milliseconds(1000);  // a long sleep far from the level
  s.fall_rate_bytes_per_s = 0.9e9;
  // 1 GB above the level at 0.9 GB/s: 1.1 s away. Two 1 s periods would call that a
  // crossing; the 200 ms horizon does not.
  auto d = KillPolicy::Decide(s, Reading(101, 4 * kGiB + 1'000'000'000), PolicyOptions());
  EXPECT_EQ(d.action, GuardAction::kNone);
  // 150 MB above: 167 ms away, inside the horizon.
  d = KillPolicy::Decide(s, Reading(101, 4 * kGiB + 150'000'000), PolicyOptions());
  EXPECT_EQ(d.reason, "projected");
}

TEST(KillPolicy, ARisingPoolProjectsNothing) {
  GuardState s = State();
  s.fall_rate_bytes_per_s = -5e9;
  EXPECT_EQ(KillPolicy::Decide(s, Reading(100.01, 4 * kGiB + 1), PolicyOptions()).action,
            GuardAction::kNone);
}

TEST(KillPolicy, APsiTriggerIsAReasonOnlyAboveTheLevel) {
  GuardReading r = Reading(100.01, 50 * kGiB);
  r.psi_full = true;
  auto d = KillPolicy::Decide(State(), r, PolicyOptions());
  EXPECT_EQ(d.action, GuardAction::kTrigger);
  EXPECT_EQ(d.reason, "psi");
  EXPECT_EQ(d.signal, SIGTERM);
  r.available_bytes = 3 * kGiB;  // below the level as well: the level is the reason
  d = KillPolicy::Decide(State(), r, PolicyOptions());
  EXPECT_EQ(d.reason, "memavailable");
}

TEST(KillPolicy, NoTriggerOnceTheJobIsGone) {
  GuardReading r = Reading(100.01, 1 * kGiB);
  r.job_running = false;
  r.tree_empty = true;
  EXPECT_EQ(KillPolicy::Decide(State(), r, PolicyOptions()).action, GuardAction::kDone);
}

TEST(KillPolicy, EscalatesToSigkillWhenTheGraceRunsOut) {
  GuardState s = State();
  const auto r0 = Reading(100.01, 4 * kGiB - 1);
  KillPolicy::Apply(s, KillPolicy::Decide(s, r0, PolicyOptions()), r0, PolicyOptions());
  // Within the grace and above half the level: wait.
  EXPECT_EQ(KillPolicy::Decide(s, Reading(102.0, 3 * kGiB), PolicyOptions()).action,
            GuardAction::kNone);
  // The grace is over.
  const auto r1 = Reading(103.02, 3 * kGiB);
  const auto d = KillPolicy::Decide(s, r1, PolicyOptions());
  EXPECT_EQ(d.action, GuardAction::kEscalate);
  EXPECT_EQ(d.signal, SIGKILL);
  KillPolicy::Apply(s, d, r1, PolicyOptions());
  EXPECT_TRUE(s.killed_hard);
  EXPECT_DOUBLE_EQ(s.term_s, 100.01);  // after_term_s is measured from the SIGTERM
  EXPECT_EQ(KillPolicy::Decide(s, Reading(103.03, 3 * kGiB), PolicyOptions()).action,
            GuardAction::kNone);
}

TEST(KillPolicy, EscalatesAtOnceWhenMemoryFallsBelowHalfTheLevelDuringTheGrace) {
  GuardState s = State();
  const auto r0 = Reading(100.01, 4 * kGiB - 1);
  KillPolicy::Apply(s, KillPolicy::Decide(s, r0, PolicyOptions()), r0, PolicyOptions());
  const auto d = KillPolicy::Decide(s, Reading(100.5, 2 * kGiB - 1), PolicyOptions());
  EXPECT_EQ(d.action, GuardAction::kEscalate);
}

TEST(KillPolicy, ATimeoutIsSigtermThenSigkillAfterTheGrace) {
  KillPolicyOptions o = PolicyOptions();
  o.timeout = milliseconds(5000);
  GuardState s = State();
  EXPECT_EQ(KillPolicy::Decide(s, Reading(104.9, 50 * kGiB), o).action, GuardAction::kNone);
  const auto r = Reading(105.0, 50 * kGiB);
  const auto d = KillPolicy::Decide(s, r, o);
  EXPECT_EQ(d.action, GuardAction::kTimeout);
  EXPECT_EQ(d.signal, SIGTERM);
  KillPolicy::Apply(s, d, r, o);
  EXPECT_TRUE(s.timed_out);
  EXPECT_TRUE(s.cleanup);
  EXPECT_FALSE(s.triggered);
  EXPECT_EQ(KillPolicy::Decide(s, Reading(106, 50 * kGiB), o).action, GuardAction::kNone);
  // A memory reason during the timeout's grace still triggers (SIGKILL at once here).
  const auto mem = KillPolicy::Decide(s, Reading(106, 1 * kGiB), o);
  EXPECT_EQ(mem.action, GuardAction::kTrigger);
  EXPECT_EQ(mem.signal, SIGKILL);
  EXPECT_EQ(KillPolicy::Decide(s, Reading(108.0, 50 * kGiB), o).action, GuardAction::kEscalate);
}

TEST(KillPolicy, LeftoversOfAnExitedJobGetSigterm) {
  GuardState s = State();
  GuardReading r = Reading(100.01, 50 * kGiB);
  r.job_running = false;
  r.tree_empty = false;
  const auto d = KillPolicy::Decide(s, r, PolicyOptions());
  EXPECT_EQ(d.action, GuardAction::kCleanup);
  EXPECT_EQ(d.signal, SIGTERM);
  KillPolicy::Apply(s, d, r, PolicyOptions());
  EXPECT_TRUE(s.cleanup);
  EXPECT_EQ(KillPolicy::Decide(s, r, PolicyOptions()).action, GuardAction::kNone);
  EXPECT_EQ(KillPolicy::Decide(s, r, PolicyOptions()).next_period, milliseconds(10));
  r.now_s = 103.01;
  EXPECT_EQ(KillPolicy::Decide(s, r, PolicyOptions()).action, GuardAction::kEscalate);
}

TEST(KillPolicy, ATriggerWithNoGraceEscalatesOnTheSameReading) {
  KillPolicyOptions o = PolicyOptions();
  o.grace = milliseconds(0);
  GuardState s = State();
  const auto r = Reading(100.01, 4 * kGiB - 1);
  const auto d = KillPolicy::Decide(s, r, o);
  ASSERT_EQ(d.action, GuardAction::kTrigger);
  KillPolicy::Apply(s, d, r, o);
  EXPECT_EQ(KillPolicy::Decide(s, r, o).action, GuardAction::kEscalate);
}

TEST(KillPolicy, TheNearPeriodIs10Ms) {
  GuardState s = State();
  // Within twice the level.
  EXPECT_EQ(KillPolicy::NextPeriod(s, Reading(100, 8 * kGiB - 1), PolicyOptions()),
            milliseconds(10));
  // Falling faster than 1 GB/s, however far.
  s.fall_rate_bytes_per_s = 1.1e9;
  EXPECT_EQ(KillPolicy::NextPeriod(s, Reading(100, 100 * kGiB), PolicyOptions()), milliseconds(10));
  // Once triggered or cleaning up.
  GuardState t = State();
  t.triggered = true;
  EXPECT_EQ(KillPolicy::NextPeriod(t, Reading(100, 100 * kGiB), PolicyOptions()), milliseconds(10));
  GuardState c = State();
  c.cleanup = true;
  EXPECT_EQ(KillPolicy::NextPeriod(c, Reading(100, 100 * kGiB), PolicyOptions()), milliseconds(10));
}

TEST(KillPolicy, TheFarPeriodIsTheTimeA20GBpsFillNeedsCappedAt1s) {
  const GuardState s = State();
  // 10 GiB available, a 4 GiB level: 6 GiB to go, 322 ms at 20 GB/s.
  const uint64_t available = 10 * kGiB;
  const double to_level_s = static_cast<double>(6 * kGiB) / kCredibleFillBytesPerSecond;
  EXPECT_EQ(KillPolicy::NextPeriod(s, Reading(100, available), PolicyOptions()),
            milliseconds(static_cast<int64_t>(to_level_s * 1000)));
  EXPECT_EQ(KillPolicy::NextPeriod(s, Reading(100, available), PolicyOptions()), milliseconds(322));
  // 100 GiB away: 5.4 s, capped at 1 s; 18 GiB away (an idle 24 GiB box): 966 ms.
  EXPECT_EQ(KillPolicy::NextPeriod(s, Reading(100, 104 * kGiB), PolicyOptions()),
            milliseconds(1000));
  EXPECT_EQ(KillPolicy::NextPeriod(s, Reading(100, 22 * kGiB), PolicyOptions()), milliseconds(966));
  // Just past twice the level: 4 GiB to go, 214 ms.
  EXPECT_EQ(KillPolicy::NextPeriod(s, Reading(100, 8 * kGiB), PolicyOptions()), milliseconds(214));
  KillPolicyOptions tiny = PolicyOptions();
  tiny.min_available_bytes = 1;
  EXPECT_EQ(KillPolicy::NextPeriod(s, Reading(100, 1000), tiny), milliseconds(10));
}

// The far period's promise, end to end: a fill at the fastest rate measured here (16.6 GB/s)
// that starts right after a far reading is projected, and acted on, at the next wakeup,
// before MemAvailable reaches the level.
TEST(KillPolicy, AFillAtTheFastestMeasuredRateIsCaughtAtTheWakeupAfterAFarSleep) {
  GuardState s = State(10 * kGiB);
  const GuardReading far = Reading(100, 10 * kGiB);
  KillPolicy::Observe(s, far);
  KillDecision d = KillPolicy::Decide(s, far, PolicyOptions());
  ASSERT_EQ(d.action, GuardAction::kNone);
  KillPolicy::Apply(s, d, far, PolicyOptions());
  ASSERT_EQ(s.period, milliseconds(322));
  constexpr double kRate = 16.6e9;
  const double slept_s = 0.322;
  const auto filled = static_cast<uint64_t>(kRate * slept_s);
  const GuardReading wake = Reading(100 + slept_s, 10 * kGiB - filled);
  ASSERT_GT(wake.available_bytes, PolicyOptions().min_available_bytes);  // not crossed yet
  KillPolicy::Observe(s, wake);
  d = KillPolicy::Decide(s, wake, PolicyOptions());
  EXPECT_EQ(d.action, GuardAction::kTrigger);
  EXPECT_EQ(d.reason, "projected");
  // What was left at the signal: the crossing was still over 60 ms away at that rate.
  EXPECT_GT(static_cast<double>(wake.available_bytes - PolicyOptions().min_available_bytes) / kRate,
            0.060);
}

TEST(KillPolicy, TheCallersMaxPeriodBoundsTheFarPeriod) {
  KillPolicyOptions o = PolicyOptions();
  o.max_period = milliseconds(10);  // a sweep: 10 ms everywhere
  EXPECT_EQ(KillPolicy::NextPeriod(State(), Reading(100, 104 * kGiB), o), milliseconds(10));
  o.max_period = milliseconds(1);  // never under 10 ms
  EXPECT_EQ(KillPolicy::NextPeriod(State(), Reading(100, 104 * kGiB), o), milliseconds(10));
  o.max_period = milliseconds(5000);  // never over 1 s
  EXPECT_EQ(KillPolicy::NextPeriod(State(), Reading(100, 104 * kGiB), o), milliseconds(1000));
  o.max_period = milliseconds(1000);
  o.tick_period = milliseconds(250);  // a progress callback wants its ticks
  EXPECT_EQ(KillPolicy::NextPeriod(State(), Reading(100, 104 * kGiB), o), milliseconds(250));
}

TEST(KillPolicy, TheFarPeriodEndsInTimeForTheTimeout) {
  KillPolicyOptions o = PolicyOptions();
  o.timeout = milliseconds(5000);
  const GuardState s = State();  // started at 100 s: the timeout is at 105 s
  EXPECT_EQ(KillPolicy::NextPeriod(s, Reading(104.7, 104 * kGiB), o), milliseconds(300));
  EXPECT_EQ(KillPolicy::NextPeriod(s, Reading(104.999, 104 * kGiB), o), milliseconds(10));
  EXPECT_EQ(KillPolicy::NextPeriod(s, Reading(101, 104 * kGiB), o), milliseconds(1000));
}

TEST(KillPolicy, TheNoneDecisionCarriesThePeriodThatApplyKeeps) {
  GuardState s = State();
  const auto r = Reading(100, 104 * kGiB);
  const auto d = KillPolicy::Decide(s, r, PolicyOptions());
  ASSERT_EQ(d.action, GuardAction::kNone);
  EXPECT_EQ(d.next_period, milliseconds(1000));
  KillPolicy::Apply(s, d, r, PolicyOptions());
  EXPECT_EQ(s.period, milliseconds(1000));
}

// One reading as the loop takes it: observed, then decided and applied until nothing is left
// to do; returns the decisions that acted (kNone's period applied last).
std::vector<KillDecision> Feed(GuardState& s, const KillPolicyOptions& o, double now_s,
                               uint64_t available) {
  const GuardReading r = Reading(now_s, available);
  KillPolicy::Observe(s, r);
  std::vector<KillDecision> acted;
  for (KillDecision d = KillPolicy::Decide(s, r, o);; d = KillPolicy::Decide(s, r, o)) {
    KillPolicy::Apply(s, d, r, o);
    if (d.action == GuardAction::kNone || d.action == GuardAction::kDone) break;
    acted.push_back(d);
  }
  return acted;
}

TEST(KillPolicy, AJobStillFillingAfterSigtermIsKilledAtTheLevelNotAfterTheGrace) {
  // 1 GB/s, a reading every 10 ms (10 MB each), from 200 MB above the 4 GiB level.
  const KillPolicyOptions o = PolicyOptions();
  const uint64_t level = o.min_available_bytes;
  GuardState s = State(level + 210'000'000);
  s.last_reading_s = 99.99;
  s.fall_rate_bytes_per_s = 1e9;
  double term_at = 0, kill_at = 0;
  uint64_t kill_available = 0;
  for (int i = 0; i < 100 && kill_at == 0; ++i) {
    const double now = 100.0 + 0.01 * i;
    const uint64_t available = level + 200'000'000 - 10'000'000ULL * i;
    for (const KillDecision& d : Feed(s, o, now, available)) {
      if (d.action == GuardAction::kTrigger) {
        EXPECT_EQ(d.signal, SIGTERM);
        term_at = now;
      }
      if (d.action == GuardAction::kEscalate) {
        EXPECT_EQ(d.reason, "crossing");
        kill_at = now;
        kill_available = available;
      }
    }
  }
  ASSERT_GT(term_at, 0);
  ASSERT_GT(kill_at, term_at);
  // Well inside the 3 s grace, and no more than 64 MiB below the level.
  EXPECT_LT(kill_at - term_at, 0.1);
  EXPECT_GT(kill_available + (64ULL << 20), level);
  EXPECT_TRUE(s.killed_hard);
}

TEST(KillPolicy, AJobThatStopsFillingAtSigtermKeepsItsGrace) {
  const KillPolicyOptions o = PolicyOptions();
  const uint64_t level = o.min_available_bytes;
  GuardState s = State(level + 30'000'000);
  s.last_reading_s = 99.99;
  s.fall_rate_bytes_per_s = 1e9;
  auto acted = Feed(s, o, 100.0, level + 15'000'000);  // projected (15 ms away): SIGTERM
  ASSERT_EQ(acted.size(), 1u);
  EXPECT_EQ(acted[0].action, GuardAction::kTrigger);
  // It stops; MemAvailable wobbles by a few MiB (other processes), down as well as up.
  for (int i = 1; i < 299; ++i) {
    const uint64_t wobble = (i % 2) ? 3'000'000 : 0;
    EXPECT_TRUE(Feed(s, o, 100.0 + 0.01 * i, level + 13'000'000 - wobble).empty()) << i;
  }
  acted = Feed(s, o, 103.0, level + 13'000'000);
  ASSERT_EQ(acted.size(), 1u);
  EXPECT_EQ(acted[0].action, GuardAction::kEscalate);
  EXPECT_EQ(acted[0].reason, "grace");
}

TEST(KillPolicy, BelowTheLevelAtSigtermAFurtherFallPastTheSlackIsSigkill) {
  const KillPolicyOptions o = PolicyOptions();
  const uint64_t level = o.min_available_bytes;
  GuardState s = State(level - 100'000'000);
  s.last_reading_s = 99.99;
  auto acted = Feed(s, o, 100.0, level - 100'000'000);  // below the level: SIGTERM
  ASSERT_EQ(acted.size(), 1u);
  EXPECT_EQ(acted[0].reason, "memavailable");
  EXPECT_EQ(s.term_available_bytes, level - 100'000'000);
  // 10 MB further (within the 16 MiB slack): still the grace.
  EXPECT_TRUE(Feed(s, o, 100.01, level - 110'000'000).empty());
  // 20 MB further, still falling: SIGKILL.
  acted = Feed(s, o, 100.02, level - 120'000'000);
  ASSERT_EQ(acted.size(), 1u);
  EXPECT_EQ(acted[0].action, GuardAction::kEscalate);
  EXPECT_EQ(acted[0].reason, "crossing");
}

TEST(KillPolicy, ASlowDriftAfterSigtermKeepsTheGrace) {
  // The job stopped at SIGTERM; the rest of the machine (a build) takes 60 MB/s. With 500 ms
  // of grace that ends 30 MB past the level at most: within the 64 MiB budget, no SIGKILL.
  KillPolicyOptions o = PolicyOptions();
  o.grace = milliseconds(500);
  const uint64_t level = o.min_available_bytes;
  GuardState s = State(level + 25'000'000);
  s.last_reading_s = 99.99;
  s.fall_rate_bytes_per_s = 1e9;
  ASSERT_EQ(Feed(s, o, 100.0, level + 15'000'000).size(), 1u);  // projected: SIGTERM
  for (int i = 1; i < 50; ++i) {
    const uint64_t drift = 600'000ULL * i;  // 0.6 MB per 10 ms
    EXPECT_TRUE(Feed(s, o, 100.0 + 0.01 * i, level + 15'000'000 - drift).empty()) << i;
  }
  const auto acted = Feed(s, o, 100.5, level - 15'000'000);
  ASSERT_EQ(acted.size(), 1u);
  EXPECT_EQ(acted[0].reason, "grace");
}

TEST(KillPolicy, ARisingReadingAfterSigtermIsNotStillFilling) {
  const KillPolicyOptions o = PolicyOptions();
  const uint64_t level = o.min_available_bytes;
  GuardState s = State(level - 100'000'000);
  s.last_reading_s = 99.99;
  ASSERT_EQ(Feed(s, o, 100.0, level - 100'000'000).size(), 1u);
  // It fell 50 MB at once (a cache refilled elsewhere), then comes back: not still falling.
  s.last_available_bytes = level - 200'000'000;
  s.last_reading_s = 100.005;
  EXPECT_TRUE(Feed(s, o, 100.01, level - 150'000'000).empty());
}

TEST(KillPolicy, ASingleForwardedSignalNeverEscalates) {
  const KillPolicyOptions o = PolicyOptions();
  GuardState s = State();
  KillPolicy::Forwarded(s, 100.0);
  EXPECT_EQ(s.forwards, 1);
  EXPECT_DOUBLE_EQ(s.term_s, 100.0);
  for (double t : {101.0, 103.5, 200.0}) {
    EXPECT_EQ(KillPolicy::Decide(s, Reading(t, 50 * kGiB), o).action, GuardAction::kNone) << t;
  }
}

TEST(KillPolicy, ARepeatedForwardedSignalIsSigkillOnceTheGraceSinceTheFirstRanOut) {
  const KillPolicyOptions o = PolicyOptions();
  GuardState s = State();
  KillPolicy::Forwarded(s, 100.0);
  KillPolicy::Forwarded(s, 101.0);  // within the grace: it waits for the grace to end
  auto d = KillPolicy::Decide(s, Reading(102.9, 50 * kGiB), o);
  EXPECT_EQ(d.action, GuardAction::kNone);
  EXPECT_EQ(d.next_period, milliseconds(10));  // so the end of the grace is seen on time
  const auto r = Reading(103.0, 50 * kGiB);
  d = KillPolicy::Decide(s, r, o);
  EXPECT_EQ(d.action, GuardAction::kEscalate);
  EXPECT_EQ(d.signal, SIGKILL);
  EXPECT_EQ(d.reason, "repeated");
  KillPolicy::Apply(s, d, r, o);
  EXPECT_EQ(KillPolicy::Decide(s, Reading(103.1, 50 * kGiB), o).action, GuardAction::kNone);
  // A second signal after the grace: SIGKILL at the next reading.
  GuardState late = State();
  KillPolicy::Forwarded(late, 100.0);
  KillPolicy::Forwarded(late, 110.0);
  EXPECT_EQ(KillPolicy::Decide(late, Reading(110.01, 50 * kGiB), o).action, GuardAction::kEscalate);
}

// Issue 29: a guard woken microseconds apart (a listener at the descriptor limit) read a few
// hundred KiB of MemAvailable's jitter each time. Far from the level (a 1 s period: a 200 ms
// horizon) that jitter over microseconds was a fall of 1e11 B/s and more, "projected", SIGKILL
// with 21 GiB free against a 64 MiB level. Readings closer than the floor make no rate.
TEST(KillPolicy, JitterMicrosecondsApartNeverProjectsAKill) {
  KillPolicyOptions o = PolicyOptions();
  o.min_available_bytes = 64 * kMiB;
  const uint64_t free = 21 * kGiB;
  GuardState s = State(free);
  s.period = milliseconds(1000);
  double now = 100.0;
  for (int i = 0; i < 20000; ++i) {
    now += (1 + i % 50) * 1e-6;  // 1-50 us apart
    const uint64_t jitter = (i % 3 == 0) ? 300 * kKiB : (i % 3 == 1) ? 700 * kKiB : 0;
    for (const KillDecision& d : Feed(s, o, now, free - jitter)) {
      ADD_FAILURE() << i << ": " << d.reason << " at a fall rate of " << s.fall_rate_bytes_per_s;
      return;
    }
    ASSERT_LT(s.fall_rate_bytes_per_s, kFastFallBytesPerSecond) << i;
  }
  EXPECT_FALSE(s.triggered);
}

// The reference reading stays until the floor has passed: a fall seen in readings 1 ms apart
// is one rate over the whole interval, not lost.
TEST(KillPolicy, ReadingsCloserThanTheFloorKeepTheReferenceReading) {
  GuardState s = State(10 * kGiB);
  for (int ms = 1; ms <= 4; ++ms) {
    KillPolicy::Observe(s, Reading(100 + ms * 1e-3, 10 * kGiB - ms * 10 * kMiB));
    EXPECT_EQ(s.fall_rate_bytes_per_s, 0) << ms;
    EXPECT_EQ(s.last_available_bytes, 10 * kGiB) << ms;
    EXPECT_DOUBLE_EQ(s.last_reading_s, 100) << ms;
  }
  KillPolicy::Observe(s, Reading(100.01, 10 * kGiB - 100 * kMiB));  // 100 MiB in 10 ms
  EXPECT_DOUBLE_EQ(s.fall_rate_bytes_per_s, 0.5 * 100.0 * kMiB / (100.01 - 100));
  EXPECT_EQ(s.last_available_bytes, 10 * kGiB - 100 * kMiB);
  EXPECT_DOUBLE_EQ(s.last_reading_s, 100.01);
}

// The guard group's end (docs/guard-group.md "Ending a node's job"), on literal readings: a
// peer's end with torchrun's workers in the tree sends SIGTERM to the workers, then to the rest
// of the tree (the agent) when the grace ends, and SIGKILL at twice the grace.
TEST(GroupEndPolicy, WorkersFirstThenTheRestAtTheGraceThenSigkillAtTwiceIt) {
  const KillPolicyOptions o = PolicyOptions();  // 3 s grace
  GuardState s = State(50 * kGiB);
  KillPolicy::GroupEnded(s, 100.0, /*workers_first=*/true, o);
  EXPECT_TRUE(s.cleanup);
  EXPECT_FALSE(s.triggered);
  EXPECT_DOUBLE_EQ(s.term_s, 100.0);
  EXPECT_EQ(KillPolicy::Decide(s, Reading(102.99, 50 * kGiB), o).action, GuardAction::kNone);
  EXPECT_EQ(KillPolicy::Decide(s, Reading(102.99, 50 * kGiB), o).next_period, milliseconds(10));
  auto acted = Feed(s, o, 103.0, 50 * kGiB);
  ASSERT_EQ(acted.size(), 1u);
  EXPECT_EQ(acted[0].action, GuardAction::kTermRest);
  EXPECT_EQ(acted[0].signal, SIGTERM);
  EXPECT_TRUE(Feed(s, o, 103.01, 50 * kGiB).empty());  // once
  EXPECT_TRUE(Feed(s, o, 105.99, 50 * kGiB).empty());
  acted = Feed(s, o, 106.0, 50 * kGiB);
  ASSERT_EQ(acted.size(), 1u);
  EXPECT_EQ(acted[0].action, GuardAction::kEscalate);
  EXPECT_EQ(acted[0].signal, SIGKILL);
  EXPECT_EQ(acted[0].reason, "grace");
  EXPECT_TRUE(s.killed_hard);
}

// Without workers the whole tree got the SIGTERM: SIGKILL when the grace ends, no second step.
TEST(GroupEndPolicy, WithoutWorkersTheWholeTreeIsKilledWhenTheGraceEnds) {
  const KillPolicyOptions o = PolicyOptions();
  GuardState s = State(50 * kGiB);
  KillPolicy::GroupEnded(s, 100.0, /*workers_first=*/false, o);
  for (double t = 100.01; t < 102.995; t += 0.5) EXPECT_TRUE(Feed(s, o, t, 50 * kGiB).empty()) << t;
  const auto acted = Feed(s, o, 103.0, 50 * kGiB);
  ASSERT_EQ(acted.size(), 1u);
  EXPECT_EQ(acted[0].action, GuardAction::kEscalate);
  EXPECT_EQ(acted[0].reason, "grace");
  EXPECT_EQ(s.term_rest_s, 0);
}

// This node's own memory trigger in a group signals the workers alone: the rest of the tree
// gets SIGTERM when the grace ends, then at once SIGKILL (the trigger's grace ends then too).
TEST(GroupEndPolicy, AMemoryTriggerWithWorkersFirstTermsTheRestThenKillsAtTheGrace) {
  const KillPolicyOptions o = PolicyOptions();
  GuardState s = State();
  auto acted = Feed(s, o, 100.0, 4 * kGiB - 1);
  ASSERT_EQ(acted.size(), 1u);
  ASSERT_EQ(acted[0].action, GuardAction::kTrigger);
  KillPolicy::WorkersFirst(s, 100.0, o);
  EXPECT_TRUE(Feed(s, o, 102.99, 4 * kGiB - 1).empty());
  acted = Feed(s, o, 103.0, 4 * kGiB - 1);
  ASSERT_EQ(acted.size(), 2u);
  EXPECT_EQ(acted[0].action, GuardAction::kTermRest);
  EXPECT_EQ(acted[1].action, GuardAction::kEscalate);
  EXPECT_EQ(acted[1].reason, "grace");
}

// A severe trigger killed the workers at once: the rest of the tree is not sent a SIGTERM
// after the SIGKILL.
TEST(GroupEndPolicy, NoSigtermForTheRestAfterASigkill) {
  const KillPolicyOptions o = PolicyOptions();
  GuardState s = State();
  auto acted = Feed(s, o, 100.0, 1 * kGiB);  // below half the level: SIGKILL at once
  ASSERT_EQ(acted.size(), 1u);
  ASSERT_EQ(acted[0].signal, SIGKILL);
  KillPolicy::WorkersFirst(s, 100.0, o);
  for (double t = 100.5; t < 110; t += 0.5) EXPECT_TRUE(Feed(s, o, t, 1 * kGiB).empty()) << t;
}

}  // namespace
}  // namespace headroom
