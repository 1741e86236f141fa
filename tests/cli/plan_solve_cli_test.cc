// CLI tests of `headroom plan --solve`: the answer agrees with plan itself at N (fits) and
// N + 1 (not fits) on the Spark fixture, and bad input is one line with the usage status.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_cli.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::kFixtures;
using testing::RunCli;

const std::string kSolveSpark = kFixtures + "gb10-idle";

std::vector<std::string> SolveArgs(std::vector<std::string> args, std::vector<std::string> more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

nlohmann::json SolveJson(const std::vector<std::string>& args) {
  const auto r = RunCli(SolveArgs(args, {"--json"}));
  EXPECT_FALSE(r.out.empty()) << r.err;
  return r.out.empty() ? nlohmann::json() : nlohmann::json::parse(r.out);
}

struct PlanSolveCase {
  std::vector<std::string> plan;  // plan's flags without the knob
  std::string knob;               // --solve's
  std::string flag;               // the knob's own flag
};

TEST(PlanSolveCli, TheAnswerIsWherePlanItselfStopsFitting) {
  const std::vector<PlanSolveCase> cases = {
      {{"plan", "llama-3.1-8b", "--seq", "4096", "--root", kSolveSpark}, "batch", "--batch"},
      {{"plan", "llama-3.1-8b", "--batch", "2", "--root", kSolveSpark}, "seq", "--seq"},
      {{"plan", "llama-3.1-70b", "--method", "qlora", "--root", kSolveSpark},
       "rank",
       "--lora-rank"},
      // A discrete card: the verdict is the worse of the device's and the host's pools.
      {{"plan", "llama-3.1-8b", "--target", "h100", "--root", kSolveSpark}, "batch", "--batch"},
      {{"plan", "qwen2.5-7b", "--method", "full", "--optimizer", "adamw-8bit", "--root",
        kSolveSpark},
       "batch",
       "--batch"},
  };
  for (const PlanSolveCase& c : cases) {
    SCOPED_TRACE(c.knob + " " + c.plan[1]);
    const auto solved = RunCli(SolveArgs(c.plan, {"--solve", c.knob}));
    ASSERT_EQ(solved.status, 0) << solved.err;
    const nlohmann::json j = SolveJson(SolveArgs(c.plan, {"--solve", c.knob}));
    ASSERT_TRUE(j.contains("solve"));
    const auto& s = j["solve"];
    EXPECT_EQ(s["knob"], c.knob);
    ASSERT_TRUE(s["value"].is_number_integer());
    const int64_t n = s["value"];
    ASSERT_GE(n, 1);
    EXPECT_NE(solved.out.find(c.flag + " " + std::to_string(n) + " is the largest that fits"),
              std::string::npos)
        << solved.out;
    // The plan shown is the answer's, and plan at N says fits.
    EXPECT_EQ(j["verdict"], "fits");
    const nlohmann::json at = SolveJson(SolveArgs(c.plan, {c.flag, std::to_string(n)}));
    EXPECT_EQ(at["verdict"], "fits");
    EXPECT_EQ(at["peak_bytes"], s["peak_bytes"]);
    EXPECT_EQ(at["peak_bytes"], j["peak_bytes"]);
    // plan at N + 1 does not fit (tight or over), with the peak solve reported.
    const nlohmann::json next = SolveJson(SolveArgs(c.plan, {c.flag, std::to_string(n + 1)}));
    EXPECT_NE(next["verdict"], "fits");
    EXPECT_EQ(next["verdict"], s["next_verdict"]);
    EXPECT_EQ(s["next_value"], n + 1);
    EXPECT_EQ(next["peak_bytes"], s["next_peak_bytes"]);
    // The limiting term is one of the next plan's, and it grew.
    const std::string limit = s["limited_by"];
    bool found = limit == "load_peak";
    for (const auto& t : next["breakdown"]) found = found || t["key"] == limit;
    EXPECT_TRUE(found) << limit;
    EXPECT_GT(s["next_limited_by_bytes"].get<uint64_t>(), s["limited_by_bytes"].get<uint64_t>());
  }
}

TEST(PlanSolveCli, NothingFitsIsExitOneWithThePlanAtOne) {
  const std::vector<std::string> args = {"plan",    "llama-3.1-70b", "--method", "full",
                                         "--solve", "batch",         "--root",   kSolveSpark};
  const auto r = RunCli(args);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.out.find("not even --batch 1 fits"), std::string::npos) << r.out;
  const auto j = SolveJson(args);
  EXPECT_TRUE(j["solve"]["value"].is_null());
  EXPECT_EQ(j["solve"]["next_value"], 1);
  EXPECT_EQ(j["workload"]["batch"], 1);
  EXPECT_EQ(j["verdict"], "does_not_fit");
  EXPECT_EQ(RunCli(SolveArgs(args, {"--json"})).status, 1);
}

TEST(PlanSolveCli, BadInputIsOneUsageLine) {
  struct Bad {
    std::vector<std::string> args;
    std::string err;
  };
  const std::vector<Bad> cases = {
      {{"plan", "llama-3.1-8b", "--method", "full", "--solve", "rank"},
       "--solve rank: --method full trains no LoRA adapter, so the rank does not move its peak"},
      {{"plan", "llama-3.1-8b", "--solve", "lr"},
       "--solve: 'lr' is not a knob plan can solve (batch, seq, rank)"},
      {{"plan", "llama-3.1-8b", "--solve", "Batch"}, "--solve: 'Batch' is not a knob"},
      {{"plan", "llama-3.1-8b", "--solve", ""}, "--solve: '' is not a knob"},
      {{"plan", "llama-3.1-8b", "--batch", "4", "--solve", "batch"},
       "conflicting flags: --solve batch finds --batch; give one or the other"},
      {{"plan", "llama-3.1-8b", "--lora-rank", "8", "--solve", "rank"},
       "conflicting flags: --solve rank finds --lora-rank"},
      {{"plan", "llama-3.1-8b", "--solve"}, "--solve"},
  };
  for (const Bad& c : cases) {
    std::vector<std::string> args = {"plan", "--root", kSolveSpark};
    args.insert(args.end(), c.args.begin() + 1, c.args.end());
    const auto r = RunCli(args);
    EXPECT_EQ(r.status, 2) << c.err;
    EXPECT_NE(r.err.find(c.err), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(PlanSolveCli, AnotherKnobsFlagIsKeptAndTheFilesValueIsReplaced) {
  // --solve seq keeps --batch 2; the answer's plan is at batch 2.
  const auto j =
      SolveJson({"plan", "llama-3.1-8b", "--batch", "2", "--solve", "seq", "--root", kSolveSpark});
  EXPECT_EQ(j["workload"]["batch"], 2);
  EXPECT_EQ(j["workload"]["seq"], j["solve"]["value"]);
  // --from FILE's micro_batch_size 2 is not a flag: --solve batch replaces it, at its seq 4096.
  const std::string file = kFixtures + "run_configs/axolotl/llama-3-qlora.yml";
  const auto k = SolveJson({"plan", "--from", file, "--solve", "batch", "--root", kSolveSpark});
  ASSERT_TRUE(k["solve"]["value"].is_number_integer());
  EXPECT_GT(k["solve"]["value"].get<int64_t>(), 2);
  EXPECT_EQ(k["workload"]["batch"], k["solve"]["value"]);
  EXPECT_EQ(k["workload"]["seq"], 4096);
}

}  // namespace
}  // namespace headroom
