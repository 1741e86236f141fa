// ladder's flags parsed by their own definitions: one subcommand at most, each writing its
// options, the required ones refused when missing.
#include "cli/ladder_flags.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <string>

namespace headroom {
namespace {

TEST(LadderFlags, EachSubcommandWritesItsOptions) {
  LadderFlags f;
  CLI::App app;
  AddLadderFlags(app, f);
  app.parse(
      "--journal j.db start train-8b --symptom step --plan-args \"llama-3.1-8b --seq 4096\" "
      "--match train.py",
      false);
  EXPECT_TRUE(f.start->parsed());
  EXPECT_FALSE(f.record->parsed() || f.next->parsed() || f.apply->parsed());
  EXPECT_EQ(f.journal, "j.db");
  EXPECT_EQ(f.job, "train-8b");
  EXPECT_EQ(f.symptom, "step");
  EXPECT_EQ(f.plan_args, "llama-3.1-8b --seq 4096");
  EXPECT_EQ(f.match, "train.py");

  LadderFlags g;
  CLI::App again;
  AddLadderFlags(again, g);
  again.parse("next train-8b --force --note why", false);
  EXPECT_TRUE(g.next->parsed());
  EXPECT_TRUE(g.force);
  EXPECT_EQ(g.note, "why");
  EXPECT_FALSE(g.yes);
}

TEST(LadderFlags, RequiredOptionsAndOneSubcommandAtMost) {
  for (const std::string words : {"record train-8b", "start train-8b", "apply", "start a b"}) {
    LadderFlags f;
    CLI::App app;
    AddLadderFlags(app, f);
    EXPECT_THROW(app.parse(words, false), CLI::ParseError) << words;
  }
  LadderFlags f;
  CLI::App app;
  AddLadderFlags(app, f);
  app.parse("--json", false);  // no subcommand: the list
  EXPECT_TRUE(f.json);
  EXPECT_FALSE(f.start->parsed());
}

TEST(LadderFlags, PlanArgsAreCheckedAtStart) {
  const SysRoot nowhere("/nonexistent");
  EXPECT_FALSE(PlanArgsFlag(CliEnv{}, nowhere, "").request);
  const LadderPlanArgs read =
      PlanArgsFlag(CliEnv{}, nowhere, "llama-3.1-8b --method qlora --budget 100GB");
  const auto& request = read.request;
  ASSERT_TRUE(request);
  EXPECT_EQ(read.recorded, "llama-3.1-8b --method qlora --budget 100GB");  // no --from: as given
  EXPECT_FALSE(read.from);
  EXPECT_EQ(request->model, "llama-3.1-8b");
  EXPECT_EQ(request->budget_bytes, 100'000'000'000ULL);
  for (const std::string words : {"no-such-model --budget 100GB", "llama-3.1-8b --batch 0",
                                  "llama-3.1-8b"}) {  // the last: no meminfo below the root
    try {
      PlanArgsFlag(CliEnv{}, nowhere, words);
      ADD_FAILURE() << words << " must be a usage error";
    } catch (const UsageError& e) {
      EXPECT_EQ(e.message.rfind("--plan-args: ", 0), 0u) << e.message;
    }
  }
}

TEST(LadderFlags, OldPlanWordsReadAsTheFlagsOrGiveTheirError) {
  Message error;
  auto request = ReadOldPlanWords("llama-3.1-8b --seq 2048", &error);
  ASSERT_TRUE(request) << EnglishText(error);
  EXPECT_EQ(request->workload.seq, 2048);
  EXPECT_FALSE(ReadOldPlanWords("llama-3.1-8b --seq lots", &error));
  EXPECT_EQ(EnglishText(error).rfind("--plan-args: ", 0), 0u) << EnglishText(error);
}

}  // namespace
}  // namespace headroom
