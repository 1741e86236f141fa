#include "sys/pool_levels.h"

#include <gtest/gtest.h>

namespace headroom {
namespace {

constexpr uint64_t kGiBytes = 1ULL << 30;
constexpr uint64_t kSparkTotal = 127'600'748ULL * 1024;  // tests/fixtures/gb10-idle

TEST(PoolLevels, DefaultsOnASparkFollowTheirRules) {
  const PoolLevels l = ResolvePoolLevels(kSparkTotal);
  EXPECT_EQ(l.mem_total_bytes, kSparkTotal);
  EXPECT_EQ(l.reserve.bytes, 4 * kGiBytes);
  EXPECT_EQ(l.kill.bytes, kSparkTotal * 8 / 100);  // 9.74 GiB
  EXPECT_EQ(l.warn.bytes, 2 * (kSparkTotal * 8 / 100));
  EXPECT_EQ(l.sweep_limit.bytes, kSparkTotal - 28'000'000'000ULL);
  for (const PoolLevel* level : {&l.reserve, &l.kill, &l.warn, &l.sweep_limit}) {
    EXPECT_EQ(level->origin, LevelOrigin::kRule);
    EXPECT_FALSE(level->where.empty());
  }
  // The reserve is set aside first; the guard's levels apply to what is left.
  EXPECT_EQ(l.floor_bytes(), 4 * kGiBytes + l.kill.bytes);
  EXPECT_EQ(l.fit_bytes(), 4 * kGiBytes + l.warn.bytes);
}

TEST(PoolLevels, GivenLevelsWinAndTheWarningFollowsTheKillLevel) {
  LevelInputs in;
  in.kill = GivenLevel{std::nullopt, 10.0, LevelOrigin::kConfig, "guard.kill_level"};
  in.reserve = GivenLevel{16 * kGiBytes, std::nullopt, LevelOrigin::kFlag, "--reserve"};
  const PoolLevels l = ResolvePoolLevels(100 * kGiBytes, in);
  EXPECT_EQ(l.kill.bytes, 10 * kGiBytes);
  EXPECT_EQ(l.kill.origin, LevelOrigin::kConfig);
  EXPECT_EQ(l.kill.where, "guard.kill_level");
  EXPECT_EQ(l.warn.bytes, 20 * kGiBytes);  // twice the given kill level
  EXPECT_EQ(l.warn.origin, LevelOrigin::kRule);
  EXPECT_EQ(l.floor_bytes(), 26 * kGiBytes);
  EXPECT_EQ(l.fit_bytes(), 36 * kGiBytes);
}

TEST(PoolLevels, JudgeFitsAboveTheWarningTightBetweenOverBelowTheKillLevel) {
  PoolLevels l = ResolvePoolLevels(kSparkTotal);
  l.reserve.bytes = 0;  // the guard's levels alone
  const uint64_t available = 115 * kGiBytes;
  EXPECT_EQ(JudgePool(available, available - l.warn.bytes, l), PoolVerdict::kFits);
  EXPECT_EQ(JudgePool(available, available - l.warn.bytes + 1, l), PoolVerdict::kTight);
  EXPECT_EQ(JudgePool(available, available - l.kill.bytes, l), PoolVerdict::kTight);
  EXPECT_EQ(JudgePool(available, available - l.kill.bytes + 1, l), PoolVerdict::kDoesNotFit);
  // The reserve comes off first: the same peaks with 4 GiB set aside for the OS.
  l.reserve.bytes = 4 * kGiBytes;
  EXPECT_EQ(JudgePool(available, available - l.warn.bytes, l), PoolVerdict::kTight);
  EXPECT_EQ(JudgePool(available, available - l.kill.bytes, l), PoolVerdict::kDoesNotFit);
  EXPECT_EQ(JudgePool(available, available - l.fit_bytes(), l), PoolVerdict::kFits);
  EXPECT_EQ(JudgePool(available, available + 1, l), PoolVerdict::kDoesNotFit);
  EXPECT_EQ(LeftoverBytes(available, available + 5), -5);
  EXPECT_EQ(LeftoverBytes(available, available - 5), 5);
}

TEST(PoolLevels, ABudgetSizeKeepsTenPercentToFitAndNoFloor) {
  const PoolLevels l = BudgetLevels(100);
  EXPECT_EQ(JudgePool(100, 90, l), PoolVerdict::kFits);
  EXPECT_EQ(JudgePool(100, 91, l), PoolVerdict::kTight);
  EXPECT_EQ(JudgePool(100, 100, l), PoolVerdict::kTight);
  EXPECT_EQ(JudgePool(100, 101, l), PoolVerdict::kDoesNotFit);
  EXPECT_EQ(JudgePool(0, 1, BudgetLevels(0)), PoolVerdict::kDoesNotFit);
}

}  // namespace
}  // namespace headroom
