#include "explain/slowdown.h"

#include <gtest/gtest.h>

#include <limits>

namespace headroom {
namespace {

using std::chrono::milliseconds;

// One interval per step from `first`, each `seconds` long, with end times from t=0 (ms).
struct Builder {
  std::vector<StepTiming> t;
  int64_t step = 0;
  int64_t now_ms = 0;
  int segment = 0;

  Builder& Steps(int n, double seconds, int64_t per_interval = 1) {
    for (int i = 0; i < n; ++i) {
      StepTiming s;
      s.first_step = step;
      s.last_step = step + per_interval;
      s.seconds_per_step = seconds;
      now_ms += static_cast<int64_t>(seconds * 1000 * per_interval);
      s.end_time = WallTime(milliseconds(now_ms));
      s.segment = segment;
      s.source = StepTimingSource::kTimestamps;
      step += per_interval;
      t.push_back(s);
    }
    return *this;
  }
  Builder& Restart(int64_t at_step) {
    ++segment;
    step = at_step;
    return *this;
  }
};

TEST(Slowdown, CleanRunHasNoWindowAndItsBaseline) {
  Builder b;
  for (int i = 0; i < 100; ++i) b.Steps(1, i % 3 == 0 ? 0.55 : 0.5);  // +-10% noise
  const auto a = FindSlowdowns(b.t);
  EXPECT_TRUE(a.windows.empty());
  EXPECT_DOUBLE_EQ(a.baseline_seconds_per_step, 0.5);
  EXPECT_EQ(a.steps, 100);
  EXPECT_EQ(a.segments, 1);
  EXPECT_EQ(a.usable_intervals, 99u);  // the first is warm-up
  EXPECT_LE(a.series.size(), 12u);
  EXPECT_EQ(a.series.front().first_step, 1);
  EXPECT_EQ(a.series.back().last_step, 100);
}

TEST(Slowdown, SustainedWindowWithStepsTimesAndFactor) {
  Builder b;
  b.Steps(100, 0.5).Steps(50, 1.0).Steps(50, 0.5);
  const auto a = FindSlowdowns(b.t);
  ASSERT_EQ(a.windows.size(), 1u);
  const auto& w = a.windows[0];
  EXPECT_EQ(w.first_step, 101);
  EXPECT_EQ(w.last_step, 150);
  EXPECT_DOUBLE_EQ(w.seconds, 50.0);
  EXPECT_DOUBLE_EQ(w.factor, 2.0);
  EXPECT_DOUBLE_EQ(w.peak_factor, 2.0);
  EXPECT_EQ(w.start_time, WallTime(milliseconds(50'000)));  // 100 steps x 0.5 s
  EXPECT_EQ(w.end_time, WallTime(milliseconds(100'000)));
}

TEST(Slowdown, SingleSlowStepIsNotSustained) {
  Builder b;
  b.Steps(50, 0.5).Steps(1, 10.0).Steps(50, 0.5);
  EXPECT_TRUE(FindSlowdowns(b.t).windows.empty());
  // Two slow steps are not sustained either (3 intervals are needed).
  Builder c;
  c.Steps(50, 0.5).Steps(2, 3.0).Steps(50, 0.5);
  EXPECT_TRUE(FindSlowdowns(c.t).windows.empty());
}

TEST(Slowdown, EvaluationPausesAreNotWindows) {
  // An HF Trainer evaluating every 50 steps: one interval of a minute each time.
  Builder b;
  for (int i = 0; i < 6; ++i) b.Steps(49, 0.5).Steps(1, 60.0);
  const auto a = FindSlowdowns(b.t);
  EXPECT_TRUE(a.windows.empty());
  EXPECT_DOUBLE_EQ(a.baseline_seconds_per_step, 0.5);
}

TEST(Slowdown, LoggingIntervalsOfManyStepsStillNeedThreeIntervals) {
  // Logged every 10 steps: one slow logging interval (10 steps) is one event, not a window;
  // three in a row are.
  Builder b;
  b.Steps(10, 0.5, 10).Steps(1, 2.0, 10).Steps(10, 0.5, 10);
  EXPECT_TRUE(FindSlowdowns(b.t).windows.empty());
  Builder c;
  c.Steps(10, 0.5, 10).Steps(3, 2.0, 10).Steps(10, 0.5, 10);
  const auto a = FindSlowdowns(c.t);
  ASSERT_EQ(a.windows.size(), 1u);
  EXPECT_EQ(a.windows[0].first_step, 101);
  EXPECT_EQ(a.windows[0].last_step, 130);
}

TEST(Slowdown, WarmUpIntervalIsNeitherBaselineNorWindow) {
  Builder b;
  b.Steps(1, 30.0).Steps(60, 0.5);  // compilation in the first interval
  const auto a = FindSlowdowns(b.t);
  EXPECT_TRUE(a.windows.empty());
  EXPECT_DOUBLE_EQ(a.baseline_seconds_per_step, 0.5);
}

TEST(Slowdown, RestartStartsAWarmUpAndWindowsDoNotSpanIt) {
  // Slow at the end of the first run (2 intervals) and after the restart (warm-up + 2):
  // 4 slow usable intervals in all, but no 3 of them in one segment.
  Builder b;
  b.Steps(60, 0.5).Steps(2, 1.5).Restart(40).Steps(3, 1.5).Steps(60, 0.5);
  const auto a = FindSlowdowns(b.t);
  EXPECT_EQ(a.segments, 2);
  EXPECT_TRUE(a.windows.empty());
  // A sustained slowdown inside the second segment is found, with the restarted steps.
  Builder c;
  c.Steps(60, 0.5).Restart(40).Steps(20, 0.5).Steps(10, 1.0).Steps(10, 0.5);
  const auto d = FindSlowdowns(c.t);
  ASSERT_EQ(d.windows.size(), 1u);
  EXPECT_EQ(d.windows[0].segment, 1);
  EXPECT_EQ(d.windows[0].first_step, 61);
  EXPECT_EQ(d.windows[0].last_step, 70);
}

TEST(Slowdown, OneFastIntervalDoesNotSplitAWindow) {
  Builder b;
  b.Steps(50, 0.5).Steps(5, 1.0).Steps(1, 0.5).Steps(5, 1.0).Steps(50, 0.5);
  const auto a = FindSlowdowns(b.t);
  ASSERT_EQ(a.windows.size(), 1u);
  EXPECT_EQ(a.windows[0].first_step, 51);
  EXPECT_EQ(a.windows[0].last_step, 61);
  // Two fast intervals do: two windows.
  Builder c;
  c.Steps(50, 0.5).Steps(5, 1.0).Steps(2, 0.5).Steps(5, 1.0).Steps(50, 0.5);
  EXPECT_EQ(FindSlowdowns(c.t).windows.size(), 2u);
}

TEST(Slowdown, BaselineIsTheFastestStretchSoASlowStartIsAWindow) {
  Builder b;
  b.Steps(30, 1.0).Steps(100, 0.5);
  const auto a = FindSlowdowns(b.t);
  EXPECT_DOUBLE_EQ(a.baseline_seconds_per_step, 0.5);
  ASSERT_EQ(a.windows.size(), 1u);
  EXPECT_EQ(a.windows[0].first_step, 2);  // after the warm-up interval
  EXPECT_EQ(a.windows[0].last_step, 30);
}

TEST(Slowdown, JustUnderTheFactorIsNotSlow) {
  Builder b;
  b.Steps(50, 0.5).Steps(20, 0.74).Steps(50, 0.5);
  EXPECT_TRUE(FindSlowdowns(b.t).windows.empty());
  Builder c;
  c.Steps(50, 0.5).Steps(20, 0.75).Steps(50, 0.5);
  EXPECT_EQ(FindSlowdowns(c.t).windows.size(), 1u);
}

TEST(Slowdown, NoTimesGiveWindowsWithoutWallTime) {
  Builder b;
  b.Steps(50, 0.5).Steps(10, 1.0).Steps(50, 0.5);
  for (auto& t : b.t) t.end_time.reset();
  const auto a = FindSlowdowns(b.t);
  ASSERT_EQ(a.windows.size(), 1u);
  EXPECT_FALSE(a.windows[0].start_time);
  EXPECT_FALSE(a.windows[0].end_time);
}

TEST(Slowdown, EmptyAndTinyInputs) {
  EXPECT_TRUE(FindSlowdowns({}).windows.empty());
  EXPECT_EQ(FindSlowdowns({}).baseline_seconds_per_step, 0);
  Builder b;
  b.Steps(1, 0.5);  // only a warm-up interval: no baseline
  const auto a = FindSlowdowns(b.t);
  EXPECT_EQ(a.baseline_seconds_per_step, 0);
  EXPECT_TRUE(a.windows.empty());
  EXPECT_EQ(a.series.size(), 1u);
}

// Issue 29: step numbers near 2^63 (a forged or broken records file) read as "steps": -16.
TEST(Slowdown, StepsNearTheTopOfInt64DoNotWrap) {
  constexpr int64_t kHuge = std::numeric_limits<int64_t>::max() - 7;  // 2^63 - 8
  Builder b;
  b.Steps(1, 1e-15, kHuge).Restart(0).Steps(1, 1e-15, kHuge).Restart(0).Steps(4, 0.5);
  const auto a = FindSlowdowns(b.t);
  EXPECT_EQ(a.steps, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(a.segments, 3);
  Builder plain;
  plain.Steps(3, 1e-15, kHuge / 4);
  EXPECT_EQ(FindSlowdowns(plain.t).steps, kHuge / 4 * 3);  // below the top, still exact
}

}  // namespace
}  // namespace headroom
