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

TEST(PlanJson, ModelSourceAndNotesFromTheResolvedRequest) {
  PlanInputs in;
  in.spec = *FindModel("llama-3.1-8b");
  in.model_source = "config";
  in.model_notes = {Msg("read {} tensors", 291)};
  in.budget.budget_bytes = 100'000'000'000;
  const PlanResult p = MakePlan(in);
  EXPECT_EQ(p.footprint.peak_bytes(),
            MakePlan(in.spec, in.workload, in.budget, in.options).footprint.peak_bytes());
  const auto j = PlanToJson(p);
  EXPECT_EQ(j["model"]["source"], "config");
  EXPECT_EQ(j["model"]["notes"], nlohmann::json::array({"read 291 tensors"}));
}

TEST(PlanJson, CatalogListsEveryModelWithItsShape) {
  const auto j = CatalogToJson();
  EXPECT_EQ(j["schema_version"], kPlanSchemaVersion);
  ASSERT_EQ(j["models"].size(), Catalog().size());
  const auto& first = j["models"][0];
  EXPECT_EQ(first["name"], Catalog().front().name);
  EXPECT_EQ(first["params"], ArchitectureParams(Catalog().front()));
  EXPECT_EQ(first["layers"], Catalog().front().num_layers);
  EXPECT_TRUE(first.contains("source"));
}

}  // namespace
}  // namespace headroom
