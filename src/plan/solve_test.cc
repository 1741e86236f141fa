#include "plan/solve.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/catalog.h"

namespace headroom {
namespace {

TEST(LargestThatFits, FindsTheThresholdOnLiteralInputs) {
  for (int64_t threshold : {1, 2, 3, 37, 64, 65, 1000, 999'999}) {
    int calls = 0;
    const int64_t got = LargestThatFits(
        int64_t{1} << 20, [&](int64_t v) { return v <= threshold; }, &calls);
    EXPECT_EQ(got, threshold);
    // Doubling then bisection: at most 2 (log2(threshold) + 1) + 1 plans, never a sweep.
    const int bound = 2 * (static_cast<int>(std::log2(static_cast<double>(threshold))) + 1) + 1;
    EXPECT_LE(calls, bound) << "threshold " << threshold;
  }
}

TEST(LargestThatFits, EveryThresholdBelowASmallCeiling) {
  for (int64_t max : {1, 2, 7, 8, 100}) {
    for (int64_t threshold = 0; threshold <= max + 1; ++threshold) {
      const int64_t got = LargestThatFits(max, [&](int64_t v) {
        EXPECT_GE(v, 1);
        EXPECT_LE(v, max);
        return v <= threshold;
      });
      EXPECT_EQ(got, std::min(threshold, max)) << "max " << max << " threshold " << threshold;
    }
  }
}

TEST(LargestThatFits, NothingFitsIsZeroAfterOnePlan) {
  int calls = 0;
  EXPECT_EQ(LargestThatFits(
                1 << 24, [](int64_t) { return false; }, &calls),
            0);
  EXPECT_EQ(calls, 1);
}

TEST(LargestThatFits, EverythingFitsIsTheCeiling) {
  int calls = 0;
  EXPECT_EQ(LargestThatFits(
                1000, [](int64_t) { return true; }, &calls),
            1000);
  EXPECT_EQ(calls, 11);  // 1, 2, 4, ..., 512, then the ceiling itself
}

Footprint SolveTerms(std::vector<std::pair<std::string, uint64_t>> terms, uint64_t steady,
                     uint64_t load) {
  Footprint f;
  for (auto& [key, bytes] : terms) f.terms.push_back({key, Message::Literal(key), bytes, {}});
  f.steady_peak_bytes = steady;
  f.load_peak_bytes = load;
  return f;
}

TEST(LimitedBy, TheTermThatGrowsTheMost) {
  // weights is the largest term and grows a little (LoRA adapters); the optimizer grows more.
  const Footprint at =
      SolveTerms({{"weights", 16'000}, {"optimizer", 300}, {"overhead", 900}}, 20'000, 5'000);
  const Footprint next =
      SolveTerms({{"weights", 16'010}, {"optimizer", 340}, {"overhead", 950}}, 20'100, 5'000);
  EXPECT_EQ(LimitedBy(&at, next), "optimizer");
}

TEST(LimitedBy, LoadPeakOverheadAndNothingBefore) {
  const Footprint at = SolveTerms({{"weights", 100}, {"overhead", 10}}, 110, 50);
  // The next plan's peak is its load peak.
  EXPECT_EQ(LimitedBy(&at, SolveTerms({{"weights", 100}, {"overhead", 10}}, 110, 120)),
            "load_peak");
  // Only the overhead grows (its slack follows the peak).
  EXPECT_EQ(LimitedBy(&at, SolveTerms({{"weights", 100}, {"overhead", 12}}, 112, 50)), "overhead");
  // The load transient and host memory are not the steady peak's.
  EXPECT_EQ(
      LimitedBy(&at, SolveTerms({{"weights", 101}, {"load_transient", 90}, {"host_process", 50}},
                                111, 50)),
      "weights");
  // Not even 1 fits: the largest term of the plan at 1.
  EXPECT_EQ(LimitedBy(nullptr, SolveTerms({{"logits", 30}, {"weights", 100}}, 130, 50)), "weights");
}

TEST(ParseSolveKnob, TheThreeKnobsAndAnError) {
  Message error;
  EXPECT_EQ(ParseSolveKnob("batch", &error), SolveKnob::kBatch);
  EXPECT_EQ(ParseSolveKnob("seq", &error), SolveKnob::kSeq);
  EXPECT_EQ(ParseSolveKnob("rank", &error), SolveKnob::kRank);
  EXPECT_FALSE(ParseSolveKnob("lr", &error));
  EXPECT_EQ(EnglishText(error), "--solve: 'lr' is not a knob plan can solve (batch, seq, rank)");
  EXPECT_EQ(SolveKnobMax(SolveKnob::kBatch), int64_t{1} << 20);
  EXPECT_EQ(SolveKnobMax(SolveKnob::kSeq), int64_t{1} << 24);
}

TEST(KnobDoesNotMove, RankOfAFullFineTune) {
  const ModelSpec& spec = *FindModel("llama-3.1-8b");
  Workload w;
  EXPECT_FALSE(KnobDoesNotMove(spec, w, {}, SolveKnob::kRank));
  EXPECT_FALSE(KnobDoesNotMove(spec, w, {}, SolveKnob::kBatch));
  EXPECT_FALSE(KnobDoesNotMove(spec, w, {}, SolveKnob::kSeq));
  w.method = Method::kFull;
  const auto why = KnobDoesNotMove(spec, w, {}, SolveKnob::kRank);
  ASSERT_TRUE(why);
  EXPECT_EQ(EnglishText(*why),
            "--solve rank: --method full trains no LoRA adapter, so the rank does not move its "
            "peak");
}

PlanInputs SolveEightB(uint64_t budget_bytes) {
  PlanInputs in;
  in.spec = *FindModel("llama-3.1-8b");
  in.workload.seq = 4096;
  in.budget = BudgetFromSize(budget_bytes, std::nullopt);
  in.options.pool_bytes = in.budget.pool_bytes();
  return in;
}

TEST(Solve, AgreesWithThePlansVerdictAtTheAnswerAndTheNext) {
  const PlanInputs in = SolveEightB(60'000'000'000ULL);
  int made = 0;
  const PlanAt plan_at = [&](const PlanInputs& at) {
    ++made;
    return MakePlan(at);
  };
  for (SolveKnob knob : {SolveKnob::kBatch, SolveKnob::kSeq, SolveKnob::kRank}) {
    made = 0;
    const Solution s = Solve(in, knob, plan_at);
    ASSERT_GT(s.value, 1) << Name(knob);
    ASSERT_TRUE(s.at && s.next);
    EXPECT_EQ(s.plans, made) << "the answer's and the next plan are the search's own";
    EXPECT_LE(s.plans, 2 * 25);
    PlanInputs check = in;
    KnobValue(check.workload, knob) = s.value;
    EXPECT_EQ(MakePlan(check).verdict, Verdict::kFits) << Name(knob);
    EXPECT_EQ(s.at->footprint.peak_bytes(), MakePlan(check).footprint.peak_bytes());
    KnobValue(check.workload, knob) = s.value + 1;
    EXPECT_NE(MakePlan(check).verdict, Verdict::kFits) << Name(knob);
    EXPECT_EQ(s.next->footprint.peak_bytes(), MakePlan(check).footprint.peak_bytes());
  }
}

TEST(Solve, NothingFitsAndTheJson) {
  const Solution none = Solve(SolveEightB(10'000'000'000ULL), SolveKnob::kBatch,
                              [](const PlanInputs& at) { return MakePlan(at); });
  EXPECT_EQ(none.value, 0);
  EXPECT_EQ(none.plans, 1);
  EXPECT_FALSE(none.at);
  ASSERT_TRUE(none.next);
  EXPECT_EQ(none.limited_by, "weights");  // 16 GB of bf16 weights against 10 GB
  const auto j = SolutionToJson(none);
  EXPECT_TRUE(j["value"].is_null());
  EXPECT_EQ(j["next_value"], 1);
  EXPECT_EQ(j["next_verdict"], "does_not_fit");

  // A literal plan: fits up to batch 12.
  const Solution twelve =
      Solve(SolveEightB(60'000'000'000ULL), SolveKnob::kBatch, [](const PlanInputs& at) {
        PlanResult p = MakePlan(at);
        p.verdict = at.workload.batch <= 12 ? Verdict::kFits : Verdict::kDoesNotFit;
        return p;
      });
  EXPECT_EQ(twelve.value, 12);
  EXPECT_EQ(twelve.at->workload.batch, 12);
  EXPECT_EQ(twelve.next->workload.batch, 13);
  const auto k = SolutionToJson(twelve);
  EXPECT_EQ(k["knob"], "batch");
  EXPECT_EQ(k["value"], 12);
  EXPECT_EQ(k["next_value"], 13);
  EXPECT_EQ(k["next_peak_bytes"], twelve.next->footprint.peak_bytes());
  EXPECT_EQ(k["limited_by"], twelve.limited_by);
}

}  // namespace
}  // namespace headroom
