#include "sweep/results.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "testing_files.h"

namespace headroom {
namespace {

struct Fixture {
  SweepOptions options;
  SweepResult result;
};

// A grid of batch and a --param knob "lora_r", two trials: one ok, one oom with a note that
// needs quoting.
Fixture TwoTrials() {
  Fixture f;
  auto batch = ParseKnob("batch", "--batch", "1..8");
  auto rank = ParseParamKnob("lora_r=8,16");
  EXPECT_TRUE(batch && rank);
  f.options.grid = *OrderGrid({*batch, *rank}, "");
  f.options.limit_bytes = 100'000'000'000ULL;
  f.options.margin_bytes = 3'000'000'000ULL;
  f.options.min_available_bytes = 8'000'000'000ULL;
  SweepRow ok;
  ok.config.Set("batch", 4);
  ok.config.Set("lora_r", 8);
  ok.peak_bytes = 40'000'000'000ULL;
  ok.headroom_bytes = 50'000'000'000LL;
  ok.from_journal = true;
  SweepRow oom;
  oom.config.Set("batch", 8);
  oom.config.Set("lora_r", 8);
  oom.outcome = TrialOutcome::kOom;
  oom.headroom_bytes = -2'000'000'000LL;
  oom.notes = "killed, \"memavailable\"\nlog: x";
  f.result.run_id = 7;
  f.result.rows = {ok, oom};
  f.result.best = ok.config;
  return f;
}

TEST(SweepResults, TheColumnsAreTheCommonKnobsThenTheParams) {
  const auto f = TwoTrials();
  const auto cols = SweepColumns(f.options.grid);
  ASSERT_EQ(cols.size(), 4u);
  EXPECT_EQ(cols[0], (std::pair<std::string, std::string>{"batch", "batch"}));
  EXPECT_EQ(cols[1].first, "grad_accum");
  EXPECT_EQ(cols[2], (std::pair<std::string, std::string>{"seq", "seq_len"}));
  EXPECT_EQ(cols[3].first, "lora_r");
}

TEST(SweepResults, TheCsvHasOneRowPerTrialAndQuotesNotes) {
  const auto f = TwoTrials();
  EXPECT_EQ(SweepResultCsv(f.options, f.result),
            "# headroom sweep results, schema_version 1, run 7, limit_bytes 100000000000\n"
            "batch,grad_accum,seq_len,lora_r,peak_mem_bytes,headroom_bytes,status,notes\n"
            "4,,,8,40000000000,50000000000,ok,\n"
            "8,,,8,,-2000000000,oom,\"killed, \"\"memavailable\"\"\nlog: x\"\n");
}

TEST(SweepResults, TheJsonHasTheAnswerAndEveryTrial) {
  const auto f = TwoTrials();
  const auto j = SweepResultJson(f.options, f.result);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["run_id"], 7);
  EXPECT_EQ(j["kill_below_bytes"], 8'000'000'000ULL);
  EXPECT_EQ(j["best"]["batch"], 4);
  EXPECT_TRUE(j["stopped_early"].is_null());
  ASSERT_EQ(j["trials"].size(), 2u);
  EXPECT_EQ(j["trials"][0]["from_journal"], true);
  EXPECT_EQ(j["trials"][1]["status"], "oom");
  EXPECT_TRUE(j["trials"][1]["peak_bytes"].is_null());
  EXPECT_EQ(j["trials"][1]["headroom_bytes"], -2'000'000'000LL);
}

TEST(SweepResults, TheCsvFileIsReplacedAndAnUnwritableOneIsAnError) {
  const auto f = TwoTrials();
  testing::TempDir dir("sweep-results");
  const auto path = dir / "results.csv";
  testing::WriteFile(path,
                     "old contents that are longer than the new ones will be, surely\n"
                     "and a second line, and a third line, and then some more of it\n"
                     "so that a file not truncated would show its tail after the CSV\n"
                     "because the CSV is about three hundred bytes long all in all\n"
                     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n");
  auto written = WriteSweepResultCsv(path, f.options, f.result);
  ASSERT_TRUE(written) << EnglishText(written.error().what);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), SweepResultCsv(f.options, f.result));

  const auto missing = dir / "no-such-dir" / "results.csv";
  auto failed = WriteSweepResultCsv(missing, f.options, f.result);
  ASSERT_FALSE(failed);
  EXPECT_EQ(EnglishText(failed.error().what), "--csv: " + missing.string() + ": directory " +
                                                  missing.parent_path().string() +
                                                  " does not exist");
}

}  // namespace
}  // namespace headroom
