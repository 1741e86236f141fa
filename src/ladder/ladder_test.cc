// The ladder's rules (every transition), the cmdline match, and the advice each step gives.
#include "ladder/ladder.h"

#include <gtest/gtest.h>

#include "ladder/flush.h"
#include "ladder/ladder_advice.h"
#include "model/catalog.h"
#include "plan_fixtures.h"
#include "testing_messages.h"

namespace headroom {
namespace {

TEST(Ladder, OkSolvesAtTheCurrentStep) {
  for (int step = 1; step <= 4; ++step) {
    auto next = AfterResult({step, LadderStatus::kOpen}, LadderResult::kOk);
    ASSERT_TRUE(next);
    EXPECT_EQ(*next, (LadderState{step, LadderStatus::kSolved}));
  }
}

TEST(Ladder, OomMovesOnAndExhaustsAfterStepFour) {
  LadderState s;
  for (int step = 1; step < 4; ++step) {
    auto next = AfterResult(s, LadderResult::kOom);
    ASSERT_TRUE(next);
    EXPECT_EQ(*next, (LadderState{step + 1, LadderStatus::kOpen}));
    s = *next;
  }
  auto last = AfterResult(s, LadderResult::kOom);
  ASSERT_TRUE(last);
  EXPECT_EQ(*last, (LadderState{4, LadderStatus::kExhausted}));
}

TEST(Ladder, ClosedLaddersTakeNothing) {
  for (auto status : {LadderStatus::kSolved, LadderStatus::kExhausted}) {
    EXPECT_FALSE(AfterResult({2, status}, LadderResult::kOk));
    EXPECT_FALSE(AfterSkip({2, status}, true));
  }
}

TEST(Ladder, SkipNeedsForceAndNeverPassesTheLastStep) {
  auto refused = AfterSkip({1, LadderStatus::kOpen}, false);
  ASSERT_FALSE(refused);
  EXPECT_NE(EnglishText(refused.error().what).find("--force"), std::string::npos);
  auto forced = AfterSkip({1, LadderStatus::kOpen}, true);
  ASSERT_TRUE(forced);
  EXPECT_EQ(*forced, (LadderState{2, LadderStatus::kOpen}));
  EXPECT_FALSE(AfterSkip({4, LadderStatus::kOpen}, true));
}

TEST(Ladder, NamesParseBack) {
  for (auto s : {LadderSymptom::kLoad, LadderSymptom::kStep})
    EXPECT_EQ(*ParseLadderSymptom(Name(s)), s);
  for (auto s : {LadderStatus::kOpen, LadderStatus::kSolved, LadderStatus::kExhausted}) {
    EXPECT_EQ(*ParseLadderStatus(Name(s)), s);
  }
  for (auto r : {LadderResult::kOk, LadderResult::kOom}) EXPECT_EQ(*ParseLadderResult(Name(r)), r);
  EXPECT_FALSE(ParseLadderSymptom("boot"));
  EXPECT_FALSE(ParseLadderResult("fine"));
  EXPECT_EQ(LadderStepName(0), "");
  EXPECT_EQ(LadderStepName(2), "packing-then-batch");
}

TEST(Ladder, LoadSymptomSaysPackingMattersLess) {
  EXPECT_NE(EnglishText(SymptomNote(LadderSymptom::kLoad, 2)).find("do not change the load peak"),
            std::string::npos);
  EXPECT_EQ(EnglishText(SymptomNote(LadderSymptom::kStep, 2)), "");
}

TEST(LadderFlush, CmdlineParsesAndMatches) {
  using std::string_literals::operator""s;
  const auto argv = ParseCmdline("python\0train.py\0--run\0myjob\0"s);
  ASSERT_EQ(argv.size(), 4u);
  EXPECT_EQ(argv[3], "myjob");
  EXPECT_TRUE(CmdlineMatchesJob(argv, "train.py --run myjob"));
  EXPECT_FALSE(CmdlineMatchesJob(argv, "otherjob"));
  EXPECT_FALSE(CmdlineMatchesJob({}, "myjob"));
  // headroom's own ladder commands name the job but are not it.
  EXPECT_FALSE(CmdlineMatchesJob({"/usr/bin/headroom", "ladder", "apply", "myjob"}, "myjob"));
  EXPECT_TRUE(CmdlineMatchesJob({"headroom", "guard", "--", "train-myjob"}, "myjob"));
}

TEST(LadderAdvice, FlushShowsCachedBuffersAndTheCommand) {
  const auto info = ParseMemInfo(
      "MemTotal: 1000 kB\nMemAvailable: 800 kB\nCached: 500 kB\n"
      "Buffers: 100 kB\nShmem: 50 kB\n");
  const auto advice = FlushAdvice(info);
  EXPECT_EQ(advice.evidence["cached_bytes"], 500 * 1024);
  EXPECT_EQ(advice.evidence["buffers_bytes"], 100 * 1024);
  EXPECT_EQ(advice.evidence["reclaimable_bytes"], 550 * 1024);
  EXPECT_NE(EnglishText(advice.lines.back()).find(kFlushCommand), std::string::npos);
}

using testing::Over;

TEST(LadderAdvice, StepTwoGivesTheLargestSeqThenBatchThatFit) {
  const auto advice = PlanStepAdvice(2, Over(Method::kLora, 65536, 8, 40'000'000'000));
  ASSERT_GE(advice.evidence["advice"].size(), 1u);
  EXPECT_EQ(advice.evidence["advice"][0]["step"], "seq");
  const int64_t seq = advice.evidence["advice"][0]["value"].get<int64_t>();
  EXPECT_GT(seq, 0);
  EXPECT_LT(seq, 65536);
  EXPECT_EQ(advice.evidence["plan"]["verdict"], "does not fit");
}

TEST(LadderAdvice, StepThreeTurnsQloraIntoBf16Lora) {
  const auto advice = PlanStepAdvice(3, Over(Method::kQlora, 2048, 1, 100'000'000'000));
  EXPECT_EQ(advice.evidence["downgrade"]["method"], "lora");
  EXPECT_GT(advice.evidence["downgrade"]["peak_bytes"].get<uint64_t>(), 0u);
  bool says_why = false;
  for (const auto& line : advice.lines)
    says_why = says_why || EnglishText(line).find("dequantization") != std::string::npos;
  EXPECT_TRUE(says_why);
}

TEST(LadderAdvice, StepFourNamesASecondMachineNeverTensorParallel) {
  const auto advice = PlanStepAdvice(4, Over(Method::kLora, 2048, 1, 1'000'000'000));
  EXPECT_NE(EnglishText(advice.lines.back()).find("never tensor parallelism"), std::string::npos);
}

}  // namespace
}  // namespace headroom
