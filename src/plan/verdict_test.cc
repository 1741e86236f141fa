#include "plan/verdict.h"

#include <gtest/gtest.h>

#include "model/catalog.h"

namespace headroom {
namespace {

TEST(Verdict, ThresholdsAtNinetyAndHundredPercent) {
  EXPECT_EQ(Judge(90, 100), Verdict::kFits);
  EXPECT_EQ(Judge(91, 100), Verdict::kTight);
  EXPECT_EQ(Judge(100, 100), Verdict::kTight);
  EXPECT_EQ(Judge(101, 100), Verdict::kDoesNotFit);
  EXPECT_EQ(Judge(1, 0), Verdict::kDoesNotFit);
  EXPECT_EQ(Name(Verdict::kDoesNotFit), "does not fit");
}

TEST(Anchors, EveryAnchorNamesACatalogModel) {
  for (const Anchor& a : KnownAnchors()) EXPECT_NE(FindModel(a.model), nullptr) << a.model;
}

TEST(Anchors, ClosestPrefersTheSameMethodThenTheNearestSize) {
  Workload w;
  w.method = Method::kQlora;
  w.weight_dtype = DType::kNf4;
  const AnchorMatch m70 = ClosestAnchor(*FindModel("llama-3.1-70b"), w, 50'000'000'000ULL, {});
  ASSERT_NE(m70.anchor, nullptr);
  EXPECT_EQ(m70.anchor->id, "70b-qlora");
  EXPECT_GT(m70.anchor_estimate_bytes, 0u);
  // Ratio = the planner's estimate of the anchor's own setup / the reported 40 GB.
  EXPECT_DOUBLE_EQ(m70.ratio, static_cast<double>(m70.anchor_estimate_bytes) / 40e9);
  EXPECT_DOUBLE_EQ(m70.plan_ratio, 50e9 / 40e9);

  Workload full;
  full.method = Method::kFull;
  EXPECT_EQ(ClosestAnchor(*FindModel("qwen3-8b"), full, 1, {}).anchor->id, "9b-full");
  Workload lora;
  EXPECT_EQ(ClosestAnchor(*FindModel("gemma-2-27b"), lora, 1, {}).anchor->id, "27b-lora-1024");
}

TEST(Advice, FollowsTheLadderAndEachStepIsTheLargestThatFits) {
  const ModelSpec& spec = *FindModel("llama-3.2-3b");
  Workload w;  // LoRA, batch 8 x 4096: logits and activations dominate
  w.batch = 8;
  w.seq = 4096;
  const uint64_t peak = ComputeFootprint(spec, w).peak_bytes();
  const uint64_t budget = peak / 2;
  const auto advice = AdviseWithinBudget(spec, w, budget, {});
  ASSERT_GE(advice.size(), 3u);
  EXPECT_EQ(advice[0].step, "seq");
  EXPECT_EQ(advice[1].step, "batch");
  EXPECT_EQ(advice[2].step, "method");
  const uint64_t target = budget * 9 / 10;
  Workload t = w;
  t.seq = *advice[0].value;
  EXPECT_LE(ComputeFootprint(spec, t).peak_bytes(), target);
  t.seq += 1;
  EXPECT_GT(ComputeFootprint(spec, t).peak_bytes(), target);
  t = w;
  t.batch = *advice[1].value;
  EXPECT_LE(ComputeFootprint(spec, t).peak_bytes(), target);
  t.batch += 1;
  EXPECT_GT(ComputeFootprint(spec, t).peak_bytes(), target);
  EXPECT_EQ(advice[2].method, "qlora");
}

TEST(Advice, SuggestsASmallerModelOfTheSameFamily) {
  const ModelSpec& spec = *FindModel("qwen2.5-72b");
  Workload w;
  w.method = Method::kQlora;
  w.weight_dtype = DType::kNf4;
  const auto advice = AdviseWithinBudget(spec, w, 30'000'000'000ULL, {});
  ASSERT_GE(advice.size(), 2u);
  // The smaller model comes just before the last step, the two-Spark plan (verdict.cc, 5.).
  const Advice& model = advice[advice.size() - 2];
  EXPECT_EQ(model.step, "model");
  ASSERT_NE(FindModel(model.model), nullptr) << EnglishText(model.text);
  EXPECT_EQ(FindModel(model.model)->family, spec.family);
  EXPECT_LT(TotalParams(*FindModel(model.model)), TotalParams(spec));
  EXPECT_LE(model.peak_bytes, 27'000'000'000ULL);
  EXPECT_EQ(advice.back().step, "devices");
  EXPECT_EQ(advice.back().sharding, "fsdp");
}

}  // namespace
}  // namespace headroom
