#include "pool/pool_advice.h"

#include <gtest/gtest.h>

#include "base/bytes.h"
#include "sys/pool_levels.h"

namespace headroom {
namespace {

constexpr uint64_t kTotal = 128 * kGiB;  // reserve 8% = 10.24 GiB, budget 117.76 GiB

PoolHolder Holder(pid_t pid, HolderKind kind, uint64_t pss,
                  std::optional<uint64_t> gpu = std::nullopt) {
  PoolHolder h;
  h.facts.pid = pid;
  h.facts.pss_bytes = pss;
  h.facts.rss_bytes = pss * 2;  // PSS wins where both are known
  h.kind = kind;
  h.gpu_bytes = gpu;
  return h;
}

HolderCap Fraction(double f) {
  HolderCap c;
  c.pool_fraction = f;
  c.source = "--gpu-memory-utilization";
  return c;
}

TEST(PoolAdvice, SmallJobBesideHalfCappedVllmKeeps) {
  const auto a =
      AdviseBesideJob({Holder(1234, HolderKind::kVllm, kGiB)}, {Fraction(0.5)}, 4 * kGiB, kTotal);
  EXPECT_EQ(a.reserve_bytes, kTotal * 8 / 100);
  ASSERT_EQ(a.holders.size(), 1u);
  EXPECT_EQ(a.holders[0].action, HolderAction::kKeep);
  EXPECT_EQ(a.holders[0].size_bytes, 64 * kGiB);
  EXPECT_EQ(EnglishText(a.holders[0].arithmetic),
            "vllm cap 0.50 x 128.00 GiB = 64.00 GiB + need 4.00 GiB = 68.00 GiB of 117.76 GiB "
            "(MemTotal 128.00 GiB - reserve 10.24 GiB): keep");
  EXPECT_TRUE(a.holders[0].stop_command.empty());
  EXPECT_TRUE(a.fits);
}

TEST(PoolAdvice, NearCapacityAndUncappedStop) {
  PoolHolder trainer = Holder(2222, HolderKind::kPythonTorch, 6 * kGiB, 10 * kGiB);
  const auto a = AdviseBesideJob({Holder(1234, HolderKind::kVllm, kGiB), trainer},
                                 {Fraction(0.9), HolderCap{}}, 4 * kGiB, kTotal);
  EXPECT_EQ(a.holders[0].action, HolderAction::kStop);
  EXPECT_NE(EnglishText(a.holders[0].arithmetic).find("= 119.20 GiB > 117.76 GiB"),
            std::string::npos)
      << EnglishText(a.holders[0].arithmetic);
  EXPECT_EQ(a.holders[0].stop_command, "kill -TERM 1234");
  EXPECT_EQ(a.holders[1].action, HolderAction::kStop);
  EXPECT_NE(EnglishText(a.holders[1].arithmetic).find("holds 16.00 GiB and has no cap"),
            std::string::npos)
      << EnglishText(a.holders[1].arithmetic);
  EXPECT_FALSE(a.fits);
  EXPECT_NE(EnglishText(a.summary).find("2 holder(s) to stop"), std::string::npos);
}

TEST(PoolAdvice, HeldMoreThanCapCountsWhatItHolds) {
  // 0.25 x 128 = 32 GiB, but it holds 1 + 40 GiB.
  const auto a = AdviseBesideJob({Holder(1, HolderKind::kVllm, kGiB, 40 * kGiB)}, {Fraction(0.25)},
                                 4 * kGiB, kTotal);
  EXPECT_EQ(a.holders[0].size_bytes, 41 * kGiB);
  EXPECT_NE(EnglishText(a.holders[0].arithmetic).find("but it holds 41.00 GiB now"),
            std::string::npos);
}

TEST(PoolAdvice, WorkersCountWithTheirServer) {
  PoolHolder server = Holder(100, HolderKind::kVllm, kGiB);
  PoolHolder engine = Holder(101, HolderKind::kVllm, kGiB, 50 * kGiB);
  engine.part_of = 100;
  const auto a = AdviseBesideJob({server, engine}, {Fraction(0.3), HolderCap{}}, 4 * kGiB, kTotal);
  EXPECT_EQ(a.holders[1].action, HolderAction::kPartOf);
  EXPECT_EQ(a.holders[1].part_of, 100);
  EXPECT_EQ(a.holders[0].held_bytes, 52 * kGiB);
  EXPECT_EQ(a.holders[0].size_bytes, 52 * kGiB);  // more than 0.3 x 128 = 38.4
  EXPECT_EQ(a.holders[0].action, HolderAction::kKeep);
  EXPECT_TRUE(a.fits);
}

TEST(PoolAdvice, CappedKeptSmallestFirstUntilTheBudgetIsFull) {
  const auto a =
      AdviseBesideJob({Holder(1, HolderKind::kVllm, 0), Holder(2, HolderKind::kSglang, 0),
                       Holder(3, HolderKind::kVllm, 0)},
                      {Fraction(0.5), Fraction(0.2), Fraction(0.3)}, 4 * kGiB, kTotal);
  // 0.2 (25.6) kept, 0.3 (38.4) kept: 64 + 4 = 68; 0.5 (64): 64 + 64 + 4 = 132 > 117.76.
  EXPECT_EQ(a.holders[1].action, HolderAction::kKeep);
  EXPECT_EQ(a.holders[2].action, HolderAction::kKeep);
  EXPECT_EQ(a.holders[0].action, HolderAction::kStop);
  EXPECT_NE(EnglishText(a.holders[0].arithmetic).find("+ 64.00 GiB kept + need"), std::string::npos)
      << EnglishText(a.holders[0].arithmetic);
  EXPECT_FALSE(a.fits);
}

TEST(PoolAdvice, LlamaCppNeedsAKnownSize) {
  HolderCap fixed;
  fixed.fixed_after_load = true;
  auto a = AdviseBesideJob({Holder(1, HolderKind::kLlamaCpp, 5 * kGiB)}, {fixed}, 4 * kGiB, kTotal);
  EXPECT_EQ(a.holders[0].action, HolderAction::kStop);  // GPU memory unknown
  EXPECT_NE(EnglishText(a.holders[0].arithmetic).find("size unknown"), std::string::npos);
  fixed.cpu_only = true;
  a = AdviseBesideJob({Holder(1, HolderKind::kLlamaCpp, 5 * kGiB)}, {fixed}, 4 * kGiB, kTotal);
  EXPECT_EQ(a.holders[0].action, HolderAction::kKeep);
  EXPECT_EQ(a.holders[0].size_bytes, 5 * kGiB);
}

TEST(PoolAdvice, JobAloneTooBigAndNothingRunning) {
  auto a = AdviseBesideJob({}, {}, 120 * kGiB, kTotal);
  EXPECT_FALSE(a.fits);
  EXPECT_NE(EnglishText(a.summary).find("alone is more than the budget"), std::string::npos);
  a = AdviseBesideJob({}, {}, 4 * kGiB, kTotal);
  EXPECT_TRUE(a.fits);
  // Small machines: the 4 GiB floor of the reserve.
  EXPECT_EQ(DefaultKillLevelBytes(16 * kGiB), 4 * kGiB);
}

TEST(PoolAdvice, ConfiguredReserveReplacesTheGuardDefault) {
  // [guard] kill_level in config.toml: the reserve kept free is the user's level.
  const auto a = AdviseBesideJob({}, {}, 4 * kGiB, kTotal, 20 * kGiB);
  EXPECT_EQ(a.reserve_bytes, 20 * kGiB);
  EXPECT_EQ(a.budget_bytes, kTotal - 20 * kGiB);
  const auto b = AdviseBesideJob({}, {}, kTotal - 10 * kGiB, kTotal, 20 * kGiB);
  EXPECT_FALSE(b.fits);  // fits beside the default reserve, not beside the configured one
  EXPECT_TRUE(
      AdviseBesideJob({}, {}, kTotal - 10 * kGiB - DefaultKillLevelBytes(kTotal), kTotal).fits);
}

}  // namespace
}  // namespace headroom
