#include "plan/budget.h"

#include <gtest/gtest.h>

#include "config/settings.h"  // kDefaultReserveBytes
#include "testing_files.h"

namespace headroom {
namespace {

const std::string kFixtures = testing::FixturePath("");

MemInfo Read(const std::string& tree) {
  auto info = ReadMemInfo(SysRoot(kFixtures + tree));
  EXPECT_TRUE(info.ok()) << tree;
  return info.ok() ? *info : MemInfo{};
}

// The budget is what a run may peak at before "does not fit": MemAvailable minus the reserve
// for the OS (4 GiB) and the guard's kill level (8 % of a Spark's MemTotal, 9.74 GiB).
TEST(Budget, Gb10IdleIsMemAvailableMinusTheReserveAndTheKillLevel) {
  const MemInfo info = Read("gb10-idle");
  const Budget b = BudgetFromMemInfo(info, kDefaultReserveBytes, "meminfo");
  EXPECT_EQ(b.mem_total_bytes, 127600748ULL * 1024);
  ASSERT_TRUE(info.available_bytes());
  const uint64_t kill = DefaultKillLevelBytes(127600748ULL * 1024);
  EXPECT_EQ(b.budget_bytes, *info.available_bytes() - (4ULL << 30) - kill);
  EXPECT_EQ(b.levels.kill.bytes, kill);
  EXPECT_EQ(b.levels.warn.bytes, 2 * kill);
  EXPECT_EQ(b.levels.reserve.bytes, 4ULL << 30);
  EXPECT_EQ(b.judged_available_bytes, *info.available_bytes());
  EXPECT_EQ(b.available_source, "MemAvailable");
  // About 115 GiB available at idle (the fixture's claim).
  EXPECT_NEAR(static_cast<double>(*b.mem_available_bytes) / (1ULL << 30), 115, 1.5);
}

TEST(Budget, PageCacheIsAvailableNotUsed) {
  const Budget idle = BudgetFromMemInfo(Read("gb10-idle"), kDefaultReserveBytes, "m");
  const Budget cache = BudgetFromMemInfo(Read("gb10-pagecache"), kDefaultReserveBytes, "m");
  // 40 GiB more page cache, reclaimable, so the budget barely moves.
  ASSERT_TRUE(cache.reclaimable_cache_bytes && idle.reclaimable_cache_bytes);
  EXPECT_GT(*cache.reclaimable_cache_bytes, *idle.reclaimable_cache_bytes + (39ULL << 30));
  EXPECT_NEAR(static_cast<double>(cache.budget_bytes), static_cast<double>(idle.budget_bytes),
              2.0 * (1ULL << 30));
}

TEST(Budget, UnderPressureTheBudgetIsSmall) {
  const Budget b = BudgetFromMemInfo(Read("gb10-pressure"), kDefaultReserveBytes, "m");
  EXPECT_LT(b.budget_bytes, 4ULL << 30);
  // A reserve larger than MemAvailable leaves nothing, not a wrapped huge number.
  const Budget none = BudgetFromMemInfo(Read("gb10-pressure"), 1ULL << 40, "m");
  EXPECT_EQ(none.budget_bytes, 0u);
}

TEST(Budget, OldKernelIsEstimatedAndSaysSo) {
  const Budget b = BudgetFromMemInfo(Read("old-kernel"), kDefaultReserveBytes, "m");
  ASSERT_TRUE(b.mem_available_bytes);
  EXPECT_NE(b.available_source.find("estimated"), std::string::npos);
  EXPECT_NE(b.source.find("estimated"), std::string::npos);
}

TEST(Budget, FromSizeKeepsThePoolFigures) {
  const Budget b = BudgetFromSize(24ULL << 30, Read("gb10-idle"));
  EXPECT_EQ(b.budget_bytes, 24ULL << 30);
  EXPECT_EQ(b.judged_available_bytes, 24ULL << 30);
  EXPECT_EQ(b.levels.floor_bytes(), 0u);
  EXPECT_EQ(b.pool_bytes(), 127600748ULL * 1024);
  EXPECT_EQ(BudgetFromSize(7, std::nullopt).pool_bytes(), 7u);
}

}  // namespace
}  // namespace headroom
