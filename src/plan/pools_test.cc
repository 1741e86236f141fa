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

TEST(Gb10ProfileBudget, IdleMemAvailableLessTheReserve) {
  const Budget b = Gb10ProfileBudget(4ULL << 30, std::nullopt);
  EXPECT_EQ(b.mem_total_bytes, kGb10MemTotalBytes);
  EXPECT_EQ(b.budget_bytes, kGb10IdleMemAvailableBytes - (4ULL << 30));
  EXPECT_NE(b.source.find("not measured here"), std::string::npos);
  EXPECT_EQ(Gb10ProfileBudget(4ULL << 30, 50ULL << 30).budget_bytes, 50ULL << 30);
}

}  // namespace
}  // namespace headroom
