// What the library returns, shown on a terminal in zh_TW: its message values rendered by
// TranslatedText (the terminal's renderer) on a thread with the built catalog
// (tests/support/testing_messages.h), while the data made from the same values (plan --json, the
// ladder's journal) is English. Moved here from the modules' own tests when their results
// became message values: translating is the CLI's business.
#include <gtest/gtest.h>

#include "cli/cli.h"
#include "cli/labels.h"
#include "cli/message_text.h"
#include "doctor/checks.h"
#include "doctor_facts.h"
#include "ladder/ladder.h"
#include "ladder/ladder_advice.h"
#include "model/catalog.h"
#include "plan/plan.h"
#include "plan_fixtures.h"
#include "testing_messages.h"

namespace headroom {
namespace {

using testing::OverBudget;

using testing::Over;

using testing::Gb10Facts;
using testing::Gpu;
using testing::Torch;

TEST(PlanJson, AdviceShownWithoutACatalogIsTheEnglishText) {
  const PlanResult p = OverBudget();
  ASSERT_FALSE(p.advice.empty());
  for (const auto& a : p.advice) {
    EXPECT_EQ(TranslatedText(a.text), EnglishText(a.text));  // no catalog: the same words
  }
}

TEST(PlanJson, StaysEnglishOnATranslatedThread) {
  testing::TranslatedThread zh;
  HEADROOM_REQUIRE_ZH_TW(zh);
  const PlanResult p = OverBudget();
  // Shown: Chinese.
  EXPECT_EQ(TranslatedText(VerdictWord(p.verdict)), "無法容納");
  EXPECT_EQ(TranslatedText(p.footprint.terms.front().label), "權重");
  ASSERT_FALSE(p.advice.empty());
  EXPECT_NE(TranslatedText(p.advice.front().text), EnglishText(p.advice.front().text));
  EXPECT_EQ(TrText(KnownAnchors().front().statement), "70B QLoRA 約 40 GB");
  // Data: English, word for word what an English run writes.
  const auto j = PlanToJson(p);
  EXPECT_EQ(j["verdict"], "does_not_fit");
  EXPECT_EQ(j["breakdown"][0]["key"], "weights");
  EXPECT_EQ(j["breakdown"][0]["label"], "weights");
  EXPECT_EQ(j["notes"].back(),
            "load peak assumes the loader streams shards onto the device (device_map set); one "
            "that builds the "
            "model on the host first peaks near twice the weights");
  EXPECT_EQ(j["advice"][0]["text"], EnglishText(p.advice[0].text));
  EXPECT_TRUE(j["advice"][0]["text"].get<std::string>().starts_with(
      "no shorter --seq fits: --seq moves the activations and logits ("))
      << j["advice"][0]["text"];
  EXPECT_EQ(j["disclaimer"], kPlanDisclaimer);
  // A 70B full fine-tune has no anchor (the full one is a 9B); the 70B QLoRA has, in English.
  EXPECT_EQ(p.anchor.anchor, nullptr);
  EXPECT_TRUE(j["anchor"].is_null());
  Workload qlora;
  qlora.method = Method::kQlora;
  qlora.weight_dtype = DefaultWeightDType(Method::kQlora);
  const PlanResult q = MakePlan(*FindModel("llama-3.1-70b"), qlora, p.budget, {});
  ASSERT_NE(q.anchor.anchor, nullptr);
  EXPECT_EQ(PlanToJson(q)["anchor"]["statement"], q.anchor.anchor->statement);
  // The same numbers as the plan that was shown.
  EXPECT_EQ(j["peak_bytes"], p.footprint.peak_bytes());
}

// The journal keeps the English of `lines` and the evidence on a translated thread, where
// only the terminal's rendering of the same lines changes language.
TEST(LadderAdvice, JournalTextStaysEnglishOnATranslatedThread) {
  testing::TranslatedThread zh;
  HEADROOM_REQUIRE_ZH_TW(zh);
  const auto advice = PlanStepAdvice(2, Over(Method::kLora, 65536, 8, 40'000'000'000));
  ASSERT_FALSE(advice.lines.empty());
  const std::string english = EnglishText(advice.lines[0]);
  const std::string shown = TranslatedText(advice.lines[0]);
  EXPECT_TRUE(english.starts_with("plan: ")) << english;
  EXPECT_NE(english.find("(does not fit)"), std::string::npos) << english;
  EXPECT_TRUE(shown.starts_with("規劃：")) << shown;
  EXPECT_NE(shown.find("（無法容納）"), std::string::npos) << shown;
  EXPECT_TRUE(
      advice.evidence["advice"][0]["text"].get<std::string>().starts_with("shorten the packing"));
  EXPECT_EQ(advice.evidence["plan"]["verdict"], "does not fit");
  EXPECT_EQ(EnglishText(SymptomNote(LadderSymptom::kLoad, 3)),
            "QLoRA quantizes while loading: its transient buffers can OOM where bf16 LoRA loads");
  EXPECT_NE(TranslatedText(SymptomNote(LadderSymptom::kLoad, 3)),
            EnglishText(SymptomNote(LadderSymptom::kLoad, 3)));
  EXPECT_EQ(LadderStepName(1), "flush-page-cache");
  EXPECT_EQ(LadderStepTitle(1), "flush the page cache between runs");  // --json's step_title
  EXPECT_STREQ(Tr(std::string(LadderStepTitle(1)).c_str()), "在兩次執行之間清除頁面快取");
}

// env-report.json is data: made from the same checks shown in Chinese, it is still English.
TEST(DoctorChecks, ReportStaysEnglishWhenTheChecksAreShownTranslated) {
  testing::TranslatedThread zh;
  HEADROOM_REQUIRE_ZH_TW(zh);
  DoctorFacts f = Gb10Facts();
  f.torch = Torch("2.7.0+cu128", "12.8");
  const auto checks = RunChecks(f);
  EXPECT_EQ(TranslatedText(checks[0].summary), "torch CUDA 12.8 對驅動程式 CUDA 13.0：主版本不符");
  EXPECT_EQ(TranslatedText(checks[2].title), "統一記憶體餘裕");
  EXPECT_EQ(CheckVerdictLabel(checks[0].verdict), "失敗");
  EXPECT_EQ(CheckVerdictName(checks[0].verdict), "fail");
  EXPECT_EQ(DoctorVerdictLabel(DoctorVerdict::kBlocked), "受阻");
  const auto j = ReportJson(f, checks, OverallVerdict(checks, std::nullopt));
  EXPECT_EQ(j["verdict"], "blocked");
  EXPECT_EQ(j["checks"]["G1"], "fail: torch CUDA 12.8 vs driver CUDA 13.0: major mismatch");
  EXPECT_EQ(j["checks"]["G8"],
            "info: offline: known breakage not checked (see the links to check by hand)");
  EXPECT_EQ(j["check_details"][2]["title"], "UMA headroom");
  for (const auto& c : j["check_details"]) {
    for (const auto& d : c["details"]) {
      const std::string line = d.get<std::string>();
      // No CJK or full-width character (UTF-8 lead bytes 0xE0 and up; "°" is 0xC2 0xB0).
      for (unsigned char ch : line) EXPECT_LT(ch, 0xE0) << c["id"] << ": " << line;
    }
  }
}

}  // namespace
}  // namespace headroom
