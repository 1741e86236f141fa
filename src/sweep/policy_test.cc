#include "sweep/policy.h"

#include <gtest/gtest.h>

#include "base/bytes.h"

namespace headroom {
namespace {

constexpr uint64_t kSparkMemTotal = 127600748ULL * 1024;  // a DGX Spark's MemTotal

TEST(SweepPolicy, TheLimitOnASparkLeaves28GB) {
  EXPECT_EQ(DefaultSweepLimitBytes(kSparkMemTotal), kSparkMemTotal - 28'000'000'000ULL);
}

TEST(SweepPolicy, ASmallerMachineKeepsTheSameShareOrWhatAFittingPlanLeaves) {
  // A quarter of a Spark would keep a quarter of the owners' 28 GB, 7 GB, but a plan that fits
  // there leaves the reserve (4 GiB) and the warning level (twice the 4 GiB kill level): the
  // limit keeps the larger, 12 GiB, so a trial at it is not in the guard's warning.
  const uint64_t total = kSparkMemTotal / 4;
  EXPECT_EQ(DefaultSweepLimitBytes(total), total - 12 * kGiB);
  EXPECT_EQ(DefaultSweepLimitBytes(total, 6'000'000'000ULL), total - 7'000'000'000ULL);
  // A larger machine keeps at least the Spark's 28 GB; its default warning level (16 % of
  // MemTotal) and the reserve are more.
  const uint64_t big = 2 * kSparkMemTotal;
  EXPECT_EQ(DefaultSweepLimitBytes(big), big - (4 * kGiB + 2 * (big * 8 / 100)));
  EXPECT_EQ(DefaultSweepLimitBytes(big, 20 * kGiB), big - 28'000'000'000ULL);
}

TEST(SweepPolicy, TheMarginIsThreePercentAndAtLeast256MiB) {
  EXPECT_EQ(DefaultSweepMarginBytes(100'000'000'000ULL), 3'000'000'000ULL);
  EXPECT_EQ(DefaultSweepMarginBytes(1'000'000'000ULL), 256 * kMiB);
}

TEST(SweepPolicy, TheSettleToleranceIsTwoPercentAndAtLeast512MiB) {
  EXPECT_EQ(DefaultSettleToleranceBytes(100'000'000'000ULL), 2'000'000'000ULL);
  EXPECT_EQ(DefaultSettleToleranceBytes(8 * kGiB), 512 * kMiB);
}

TEST(SweepPolicy, TheRoomToStartIsTheLimitPlusTheKillLevelAtMostMemTotal) {
  EXPECT_EQ(DefaultRequireAvailableBytes(90, 8, 100), 98u);
  EXPECT_EQ(DefaultRequireAvailableBytes(95, 8, 100), 100u);
}

TEST(SweepPolicy, TheLimitIsTheFlagsElseTheDefaultAndAtMostMemTotal) {
  const uint64_t total = 127600748ULL * 1024;
  EXPECT_EQ(*SweepLimitBytes(std::nullopt, total, DefaultSweepLimitBytes(total)),
            DefaultSweepLimitBytes(total));
  EXPECT_EQ(*SweepLimitBytes(90'000'000'000ULL, total, 1), 90'000'000'000ULL);
  EXPECT_EQ(*SweepLimitBytes(total, total, 1), total);
  auto over = SweepLimitBytes(total + 1, total, 1);
  ASSERT_FALSE(over);
  EXPECT_EQ(EnglishText(over.error().what),
            "--limit: " + FormatGB(total + 1) + " is more than MemTotal " + FormatGB(total));
}

TEST(SweepPolicy, TrialLogsGoBesideTheJournalUnlessLogsSays) {
  EXPECT_EQ(SweepLogDir("", "/home/u/.local/state/headroom/journal.db"),
            "/home/u/.local/state/headroom/sweeps");
  EXPECT_EQ(SweepLogDir("", "journal.db"), "sweeps");
  EXPECT_EQ(SweepLogDir("/scratch/logs", "/var/j.db"), "/scratch/logs");
}

}  // namespace
}  // namespace headroom
