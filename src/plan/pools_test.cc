#include "plan/pools.h"

#include <gtest/gtest.h>

#include "gpu/platform.h"

namespace headroom {
namespace {

TEST(JudgeDevice, NinetyPercentOfTheFreeMemoryFits) {
  EXPECT_EQ(JudgeDevice(90, 100), Verdict::kFits);
  EXPECT_EQ(JudgeDevice(91, 100), Verdict::kTight);
  EXPECT_EQ(JudgeDevice(100, 100), Verdict::kTight);
  EXPECT_EQ(JudgeDevice(101, 100), Verdict::kDoesNotFit);
  EXPECT_EQ(JudgeDevice(1, 0), Verdict::kDoesNotFit);
}

TEST(WorseVerdict, DoesNotFitOverTightOverFits) {
  EXPECT_EQ(WorseVerdict(Verdict::kFits, Verdict::kTight), Verdict::kTight);
  EXPECT_EQ(WorseVerdict(Verdict::kDoesNotFit, Verdict::kTight), Verdict::kDoesNotFit);
  EXPECT_EQ(WorseVerdict(Verdict::kFits, Verdict::kFits), Verdict::kFits);
}

TEST(ParsePlanTarget, AcceptsGb10SizesAndCards) {
  Message error;
  auto gb10 = ParsePlanTarget("gb10", &error);
  ASSERT_TRUE(gb10);
  EXPECT_TRUE(gb10->unified);
  auto sized = ParsePlanTarget("discrete:80GiB", &error);
  ASSERT_TRUE(sized);
  EXPECT_FALSE(sized->unified);
  EXPECT_EQ(sized->device_bytes, 80ULL << 30);
  auto card = ParsePlanTarget("RTX 6000 Ada", &error);
  ASSERT_TRUE(card);
  EXPECT_EQ(card->device_bytes, 48'000'000'000ULL);
  EXPECT_EQ(card->name, "RTX 6000 Ada 48GB");
  EXPECT_FALSE(ParsePlanTarget("discrete:0", &error));
  EXPECT_FALSE(ParsePlanTarget("v100", &error));
  EXPECT_EQ(EnglishText(error).rfind("--target: 'v100' is not gb10, discrete:SIZE", 0), 0u)
      << EnglishText(error);
}

// A Spark's profile is judged as a plan on the Spark itself: idle MemAvailable less the
// reserve and the kill level (8 % of its MemTotal), with a Spark's levels.
TEST(Gb10ProfileBudget, IdleMemAvailableLessTheReserveAndTheSparksKillLevel) {
  LevelInputs given;
  given.reserve = GivenLevel{4ULL << 30, std::nullopt, LevelOrigin::kFlag, "--reserve"};
  const Budget b = Gb10ProfileBudget(given, std::nullopt);
  EXPECT_EQ(b.mem_total_bytes, kGb10MemTotalBytes);
  const uint64_t kill = kGb10MemTotalBytes * 8 / 100;
  EXPECT_EQ(b.levels.kill.bytes, kill);
  EXPECT_EQ(b.levels.warn.bytes, 2 * kill);
  EXPECT_EQ(b.judged_available_bytes, kGb10IdleMemAvailableBytes);
  EXPECT_EQ(b.budget_bytes, kGb10IdleMemAvailableBytes - (4ULL << 30) - kill);
  EXPECT_NE(b.source.find("not measured here"), std::string::npos);
  const Budget sized = Gb10ProfileBudget(given, 50ULL << 30);
  EXPECT_EQ(sized.budget_bytes, 50ULL << 30);
  EXPECT_EQ(sized.judged_available_bytes, 50ULL << 30);
}

}  // namespace
}  // namespace headroom
