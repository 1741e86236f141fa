// The words syntax of --plan-args and --workload: JoinShellWords is read back by
// SplitShellWords to the same words, and doctor's workload words take "from FILE".
#include "plan/plan_words.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace headroom {
namespace {

using Words = std::vector<std::string>;

TEST(PlanWords, JoinedWordsSplitBackToThemselves) {
  for (const Words& words :
       {Words{"llama-3.1-8b", "--seq", "4096"}, Words{"--from", "/runs/my run/axolotl.yml"},
        Words{"--note", "it's \"quoted\""}, Words{"", "a\tb", "c\nd", "'", "\"", "''x''"},
        Words{}}) {
    const std::string text = JoinShellWords(words);
    Message error;
    const auto back = SplitShellWords(text, "--plan-args", &error);
    ASSERT_TRUE(back) << text << ": " << EnglishText(error);
    EXPECT_EQ(*back, words) << text;
  }
  // Plain words stay plain: what a person reads in the journal is what they typed.
  EXPECT_EQ(JoinShellWords({"--from", "/runs/a.yml", "--batch", "4"}),
            "--from /runs/a.yml --batch 4");
  EXPECT_EQ(JoinShellWords({"--from", "/my runs/a.yml"}), "--from '/my runs/a.yml'");
}

TEST(PlanWords, WorkloadFromFileIsPlansFromFlagAndNeedsNoModel) {
  Words flags;
  Words given;
  Message error;
  auto fields = ParseWorkloadWords({"qlora", "from", "run.yml", "seq", "1024", "--budget", "9GB"},
                                   &flags, &error, &given);
  ASSERT_TRUE(fields) << EnglishText(error);
  EXPECT_EQ(flags, (Words{"--from", "run.yml", "--budget", "9GB"}));
  EXPECT_EQ(given, (Words{"method", "seq"}));
  EXPECT_EQ(fields->seq, "1024");
  EXPECT_TRUE(fields->model.empty());
  flags.clear();
  fields =
      ParseWorkloadWords({"--from=run.yml", "llama-3.1-8b", "bs", "2"}, &flags, &error, &given);
  ASSERT_TRUE(fields) << EnglishText(error);
  EXPECT_EQ(given, (Words{"model", "batch"}));
  EXPECT_EQ(flags, (Words{"--from=run.yml"}));
  // Without a file a model is still needed; "from" needs its file.
  flags.clear();
  EXPECT_FALSE(ParseWorkloadWords({"qlora", "seq", "8192"}, &flags, &error));
  EXPECT_NE(EnglishText(error).find("no model named"), std::string::npos);
  EXPECT_FALSE(ParseWorkloadWords({"qlora", "from"}, &flags, &error));
  EXPECT_EQ(EnglishText(error), "--workload: 'from' needs the run's configuration file after it");
}

}  // namespace
}  // namespace headroom
