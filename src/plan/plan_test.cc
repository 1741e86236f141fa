// plan's data against its display: PlanToJson is English whatever the locale, while the
// footprint's labels, the verdict word and the advice are shown in the user's language.
#include "plan/plan.h"

#include <gtest/gtest.h>

#include "model/catalog.h"
#include "testing_messages.h"

namespace headroom {
namespace {

// A 70B full fine-tune against 100 GB: does not fit, with advice.
PlanResult OverBudget() {
  Workload w;
  w.method = Method::kFull;
  w.weight_dtype = DefaultWeightDType(Method::kFull);
  Budget b;
  b.budget_bytes = 100'000'000'000ULL;
  b.source = "--budget";
  return MakePlan(*FindModel("llama-3.1-70b"), w, b, {});
}

TEST(PlanJson, AdviceInTheJsonIsTheEnglishText) {
  const PlanResult p = OverBudget();
  ASSERT_EQ(p.verdict, Verdict::kDoesNotFit);
  ASSERT_FALSE(p.advice.empty());
  const auto j = PlanToJson(p);
  ASSERT_EQ(j["advice"].size(), p.advice.size());
  for (size_t i = 0; i < p.advice.size(); ++i) {
    EXPECT_EQ(j["advice"][i]["text"], p.advice[i].text);
    EXPECT_EQ(p.advice[i].shown_text, p.advice[i].text);  // no catalog: the same words
  }
  EXPECT_EQ(VerdictLabel(p.verdict), "does not fit");
}

TEST(PlanJson, StaysEnglishOnATranslatedThread) {
  testing::TranslatedThread zh;
  HEADROOM_REQUIRE_ZH_TW(zh);
  const PlanResult p = OverBudget();
  // Shown: Chinese.
  EXPECT_EQ(VerdictLabel(p.verdict), "無法容納");
  EXPECT_EQ(p.footprint.terms.front().label, "權重");
  ASSERT_FALSE(p.advice.empty());
  EXPECT_NE(p.advice.front().shown_text, p.advice.front().text);
  EXPECT_EQ(ShownStatement(KnownAnchors().front()), "70B QLoRA 約 40 GB");
  // Data: English, word for word what an English run writes.
  const auto j = PlanToJson(p);
  EXPECT_EQ(j["verdict"], "does_not_fit");
  EXPECT_EQ(j["breakdown"][0]["key"], "weights");
  EXPECT_EQ(j["breakdown"][0]["label"], "weights");
  EXPECT_EQ(j["notes"].back(),
            "load peak assumes the loader streams shards onto the device (device_map set); one "
            "that builds the "
            "model on the host first peaks near twice the weights");
  EXPECT_EQ(j["advice"][0]["text"],
            "no shorter --seq fits: what is over does not depend on it (weights, optimizer states "
            "and step, or "
            "the load peak)");
  EXPECT_EQ(j["disclaimer"], kPlanDisclaimer);
  ASSERT_NE(p.anchor.anchor, nullptr);
  EXPECT_EQ(j["anchor"]["statement"], p.anchor.anchor->statement);
  // The same numbers as the plan that was shown.
  EXPECT_EQ(j["peak_bytes"], p.footprint.peak_bytes());
}

}  // namespace
}  // namespace headroom
