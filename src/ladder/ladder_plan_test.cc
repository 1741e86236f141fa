// The ladder's plan: the JSON form is read before the old words (which only the reader the
// caller gives reads), errors say "--plan-args: ...", the budget is read below the ladder's
// root (gb10-pagecache's meminfo), and a new row keeps both forms of its plan.
#include "ladder/ladder_plan.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "sys/meminfo.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;

const fs::path kPageCache = fs::path(HEADROOM_SOURCE_DIR) / "tests/fixtures/gb10-pagecache";
constexpr uint64_t kReserve = 4ULL << 30;

// A request for llama-3.1-8b, QLoRA, seq 4096, batch 4, budget from MemAvailable.
PlanRequest Qlora8b() {
  PlanFlagText t;
  t.model = "llama-3.1-8b";
  t.method = "qlora";
  t.seq = "4096";
  t.batch = "4";
  Message error;
  auto r = ParsePlanRequest(t, &error);
  EXPECT_TRUE(r) << EnglishText(error);
  return r ? *r : PlanRequest{};
}

// The old form's reader for the tests: counts its calls, refuses "bad".
struct WordsReader {
  int calls = 0;
  std::string last_words;
  PlanWordsReader Reader() {
    return [this](const std::string& words, Message* error) -> std::optional<PlanRequest> {
      ++calls;
      last_words = words;
      if (words == "bad") {
        *error = Message::Literal("--plan-args: bad words");
        return std::nullopt;
      }
      return Qlora8b();
    };
  }
};

TEST(LadderPlan, TheJsonFormComesFirstAndItsErrorsNameTheFlag) {
  WordsReader words;
  LadderRow row;
  row.plan_args = "bad";  // shown to people; not read when the JSON form is there
  row.plan_request = PlanRequestToJson(Qlora8b()).dump();
  Message error;
  auto request = LadderPlanRequest(row, words.Reader(), &error);
  ASSERT_TRUE(request) << EnglishText(error);
  EXPECT_EQ(request->model, "llama-3.1-8b");
  EXPECT_EQ(request->workload.batch, 4);
  EXPECT_EQ(words.calls, 0);

  row.plan_request = R"({"schema_version": 1, "model": "llama-3.1-8b", "bogus": 1})";
  EXPECT_FALSE(LadderPlanRequest(row, words.Reader(), &error));
  EXPECT_EQ(EnglishText(error).rfind("--plan-args: ", 0), 0u) << EnglishText(error);
  row.plan_request = "{not json";
  EXPECT_FALSE(LadderPlanRequest(row, words.Reader(), &error));
  EXPECT_EQ(EnglishText(error).rfind("--plan-args: ", 0), 0u) << EnglishText(error);
  EXPECT_EQ(words.calls, 0);
}

TEST(LadderPlan, RowsWithoutTheJsonFormAreReadByTheWordsReader) {
  WordsReader words;
  LadderRow row;
  row.plan_args = "llama-3.1-8b --method qlora";
  Message error;
  ASSERT_TRUE(LadderPlanRequest(row, words.Reader(), &error));
  EXPECT_EQ(words.calls, 1);
  EXPECT_EQ(words.last_words, "llama-3.1-8b --method qlora");
  row.plan_args = "bad";
  EXPECT_FALSE(LadderPlanRequest(row, words.Reader(), &error));
  EXPECT_EQ(EnglishText(error), "--plan-args: bad words");
}

TEST(LadderPlan, TheBudgetIsReadBelowTheContextsRoot) {
  Message error;
  const PlanContext context{kPageCache, kReserve};
  auto plan = ResolveLadderPlan(Qlora8b(), context, &error);
  ASSERT_TRUE(plan) << EnglishText(error);
  auto expected = ResolvePlanRequest(Qlora8b(), context, &error);
  ASSERT_TRUE(expected);
  EXPECT_EQ(plan->budget.budget_bytes, expected->budget.budget_bytes);
  EXPECT_EQ(plan->spec.name, "llama-3.1-8b");
  EXPECT_EQ(plan->workload.seq, 4096);
  const auto info = ReadMemInfo(SysRoot(kPageCache));
  ASSERT_TRUE(info && info->available_bytes());
  EXPECT_GT(plan->budget.budget_bytes, 0u);
  EXPECT_LT(plan->budget.budget_bytes, *info->available_bytes());

  EXPECT_FALSE(ResolveLadderPlan(Qlora8b(), PlanContext{"/nonexistent", kReserve}, &error));
  EXPECT_EQ(EnglishText(error).rfind("--plan-args: ", 0), 0u) << EnglishText(error);
  PlanRequest unknown = Qlora8b();
  unknown.model = "no-such-model";
  EXPECT_FALSE(ResolveLadderPlan(unknown, context, &error));
  EXPECT_EQ(EnglishText(error).rfind("--plan-args: ", 0), 0u) << EnglishText(error);
}

TEST(LadderPlan, InputsReadMeminfoAndThePlanBelowTheLaddersRoot) {
  WordsReader words;
  const LadderInputs inputs =
      LadderInputsFor(SysRoot(kPageCache), PlanContext{"/nonexistent", kReserve}, words.Reader());
  auto info = inputs.meminfo();
  ASSERT_TRUE(info) << EnglishText(info.error().what);
  EXPECT_TRUE(info->available_bytes());
  LadderRow row;
  row.plan_args = "llama-3.1-8b";
  Message error;
  auto plan = inputs.plan(row, &error);  // the root given wins over the context's
  ASSERT_TRUE(plan) << EnglishText(error);
  EXPECT_EQ(words.calls, 1);
  EXPECT_LT(plan->budget.budget_bytes, *info->available_bytes());
  row.plan_args = "bad";
  EXPECT_FALSE(inputs.plan(row, &error));
  EXPECT_EQ(EnglishText(error), "--plan-args: bad words");
}

TEST(LadderPlan, ANewRowKeepsBothFormsOfItsPlan) {
  LadderRow row = NewLadderRow("train-8b", LadderSymptom::kStep, "", "", std::nullopt);
  EXPECT_EQ(row.job, "train-8b");
  EXPECT_EQ(row.symptom, "step");
  EXPECT_EQ(row.match_text, "train-8b");  // the job's name by default
  EXPECT_EQ(row.plan_request, "");
  row =
      NewLadderRow("j", LadderSymptom::kLoad, "train.py", "llama-3.1-8b --method qlora", Qlora8b());
  EXPECT_EQ(row.symptom, "load");
  EXPECT_EQ(row.match_text, "train.py");
  EXPECT_EQ(row.plan_args, "llama-3.1-8b --method qlora");
  EXPECT_EQ(row.plan_request, PlanRequestToJson(Qlora8b()).dump());
}

}  // namespace
}  // namespace headroom
