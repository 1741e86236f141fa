// MatchMeasuredAnchors and LocalAnchorsJson on literal sweep answers: which anchors are
// shown beside a plan, the planner's estimate of each, and plan --json's
// "measured_anchors". The journal round trip is in tests/cli/plan_cli_test.cc.
#include "plan/measured_anchors.h"

#include <gtest/gtest.h>

#include "model/catalog.h"
#include "plan/footprint.h"
#include "plan/framework_profile.h"

namespace headroom {
namespace {

MeasuredAnchor Answer(int64_t id, std::string model, std::string method) {
  MeasuredAnchor a;
  a.run_id = id;
  a.model = std::move(model);
  a.method = std::move(method);
  a.command = {"python", "train.py"};
  a.config_text = "batch=4 seq=1024";
  a.batch = 4;
  a.seq = 1024;
  a.peak_bytes = 30'000'000'000;
  return a;
}

TEST(MeasuredAnchors, ThisModelOrUnlabelledWithAnEstimateWhereTheMethodMatches) {
  const ModelSpec& spec = *FindModel("llama-3.1-8b");
  Workload w;
  w.method = Method::kQlora;
  const std::vector<MeasuredAnchor> anchors = {Answer(1, "Llama-3.1-8B-Instruct", "qlora"),
                                               Answer(2, "qwen2.5-7b", "qlora"), Answer(3, "", ""),
                                               Answer(4, "llama-3.1-8b", "full")};
  const auto shown = MatchMeasuredAnchors(anchors, spec, "llama-3.1-8b", w);
  ASSERT_EQ(shown.size(), 3u);
  EXPECT_EQ(shown[0].anchor.run_id, 1);
  Workload at = w;
  at.batch = 4;
  at.seq = 1024;
  EXPECT_EQ(shown[0].estimate_bytes, ComputeFootprint(spec, at).peak_bytes());
  EXPECT_EQ(shown[1].anchor.run_id, 3);
  EXPECT_FALSE(shown[1].estimate_bytes);  // unlabelled: no setup to estimate
  EXPECT_EQ(shown[2].anchor.run_id, 4);
  EXPECT_FALSE(shown[2].estimate_bytes);  // another method

  const auto j = LocalAnchorsJson(shown);
  ASSERT_EQ(j.size(), 3u);
  EXPECT_EQ(j[0]["run_id"], 1);
  EXPECT_EQ(j[0]["config"], "batch=4 seq=1024");
  EXPECT_EQ(j[0]["plan_estimate_bytes"], *shown[0].estimate_bytes);
  EXPECT_TRUE(j[1]["model"].is_null());
  EXPECT_TRUE(j[1]["plan_estimate_bytes"].is_null());
  EXPECT_EQ(j[2]["command"], nlohmann::json::array({"python", "train.py"}));
}

TEST(MeasuredAnchors, AtMostFiveAndNoneWithoutAJournal) {
  const ModelSpec& spec = *FindModel("llama-3.1-8b");
  std::vector<MeasuredAnchor> anchors;
  for (int i = 1; i <= 8; ++i) anchors.push_back(Answer(i, "", ""));
  EXPECT_EQ(MatchMeasuredAnchors(anchors, spec, "", Workload{}).size(), kMaxLocalAnchors);
  EXPECT_TRUE(LocalAnchors("/nonexistent/journal.db", spec, "", Workload{}).empty());
}

TEST(MeasuredAnchors, EstimatesArePlannedWithThePlansStack) {
  const ModelSpec& spec = *FindModel("llama-3.1-8b");
  Workload hf;
  hf.method = Method::kQlora;
  hf.weight_dtype = DType::kNf4;
  Workload unsloth = ProfileWorkload(Framework::kUnsloth);
  unsloth.method = Method::kQlora;
  unsloth.weight_dtype = DType::kNf4;
  const std::vector<MeasuredAnchor> anchors = {Answer(1, "llama-3.1-8b", "qlora")};
  const auto a = MatchMeasuredAnchors(anchors, spec, "llama-3.1-8b", hf);
  const auto b = MatchMeasuredAnchors(anchors, spec, "llama-3.1-8b", unsloth);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  ASSERT_TRUE(a[0].estimate_bytes && b[0].estimate_bytes);
  EXPECT_EQ(a[0].framework, Framework::kHf);
  EXPECT_EQ(b[0].framework, Framework::kUnsloth);
  Workload at = unsloth;
  at.batch = 4;
  at.seq = 1024;
  EXPECT_EQ(*b[0].estimate_bytes, ComputeFootprint(spec, at).peak_bytes());
  EXPECT_LT(*b[0].estimate_bytes, *a[0].estimate_bytes);
  EXPECT_EQ(LocalAnchorsJson(b)[0]["planned_as"], "unsloth");
}

TEST(MeasuredAnchors, ASweepStartedFromThePlanSaysWhatPlanSaid) {
  const ModelSpec& spec = *FindModel("llama-3.1-8b");
  MeasuredAnchor from_plan = Answer(7, "llama-3.1-8b", "qlora");
  from_plan.plan_knob = "batch";
  from_plan.plan_value = 6;
  const auto shown =
      MatchMeasuredAnchors({from_plan, Answer(8, "llama-3.1-8b", "qlora")}, spec, "", Workload{});
  const auto j = LocalAnchorsJson(shown);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["plan_said"]["knob"], "batch");
  EXPECT_EQ(j[0]["plan_said"]["value"], 6);
  EXPECT_TRUE(j[1]["plan_said"].is_null());
}

}  // namespace
}  // namespace headroom
