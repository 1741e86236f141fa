// plan's data: PlanToJson is English (its advice the English text of the advice's message
// values). What the terminal shows in zh_TW is tested in cli/translated_results_test.cc.
#include "plan/plan.h"

#include <gtest/gtest.h>

#include "model/catalog.h"
#include "plan_fixtures.h"
#include "testing_messages.h"

namespace headroom {
namespace {

using testing::OverBudget;

TEST(PlanJson, AdviceInTheJsonIsTheEnglishText) {
  const PlanResult p = OverBudget();
  ASSERT_EQ(p.verdict, Verdict::kDoesNotFit);
  ASSERT_FALSE(p.advice.empty());
  const auto j = PlanToJson(p);
  ASSERT_EQ(j["advice"].size(), p.advice.size());
  for (size_t i = 0; i < p.advice.size(); ++i) {
    EXPECT_EQ(j["advice"][i]["text"], EnglishText(p.advice[i].text));
  }
  EXPECT_EQ(EnglishText(VerdictWord(p.verdict)), "does not fit");
}

// plan --json computes the footprint once: PlanToJson renders the footprint MakePlan put in
// the plan and never plans again (before message values it re-planned in English). A
// footprint changed after MakePlan is what the JSON shows.
TEST(PlanJson, RendersTheFootprintThePlanHoldsWithoutPlanningAgain) {
  PlanResult p = OverBudget();
  p.footprint.weights_bytes = 12345;
  p.footprint.steady_peak_bytes = 777;
  p.footprint.load_peak_bytes = 0;
  p.footprint.terms.front().label = Msg("label {}", 1);
  p.footprint.notes = {Msg("a note of {}", GB(2'000'000'000))};
  const auto j = PlanToJson(p);
  EXPECT_EQ(j["terms"]["weights"], 12345);
  EXPECT_EQ(j["peak_bytes"], 777);
  EXPECT_EQ(j["breakdown"][0]["label"], "label 1");
  EXPECT_EQ(j["notes"], nlohmann::json::array({"a note of 2.00 GB"}));
}

}  // namespace
}  // namespace headroom
