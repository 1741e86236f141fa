// CLI tests of the pool's levels (docs/config.md "The levels"): plan's verdict against the
// guard's warning and kill levels on the Spark fixture, every advice line against the plan
// of the flags it proposes, and `config show`'s levels against the plan's.
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

const std::string kSparkIdle = kFixtures + "gb10-idle";
constexpr uint64_t kSparkMemTotal = 127600748ULL * 1024;
constexpr uint64_t kSparkKill = kSparkMemTotal * 8 / 100;  // 9.74 GiB
constexpr uint64_t kSparkWarn = 2 * kSparkKill;            // 19.47 GiB
constexpr uint64_t kLvReserve = 4ULL << 30;

struct LvPlanned {
  int status = -1;
  nlohmann::json j;
  std::string err;
};

LvPlanned LvPlanJson(std::vector<std::string> args, const std::vector<std::string>& env = {}) {
  args.push_back("--json");
  const auto r = RunCli(args, 20000, env);
  EXPECT_FALSE(r.timed_out);
  LvPlanned p{r.status, nlohmann::json::parse(r.out, nullptr, false), r.err};
  EXPECT_TRUE(p.j.is_object()) << r.out << r.err;
  return p;
}

std::vector<std::string> LvSparkPlan(std::vector<std::string> flags) {
  std::vector<std::string> args = {"plan", "llama-3.1-8b"};
  args.insert(args.end(), flags.begin(), flags.end());
  args.insert(args.end(), {"--root", kSparkIdle});
  return args;
}

// `args` with `flag` set to `value` (replaced where given, else added).
std::vector<std::string> LvWithFlag(std::vector<std::string> args, const std::string& flag,
                                    const std::string& value) {
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == flag) {
      args[i + 1] = value;
      return args;
    }
  }
  args.insert(args.end(), {flag, value});
  return args;
}

// The plan an advice entry proposes: its flags on top of the plan's own.
std::vector<std::string> LvProposed(const std::vector<std::string>& args, const nlohmann::json& a) {
  const std::string step = a["step"];
  if (step == "seq") return LvWithFlag(args, "--seq", std::to_string(a["value"].get<int64_t>()));
  if (step == "batch")
    return LvWithFlag(args, "--batch", std::to_string(a["value"].get<int64_t>()));
  if (step == "method") return LvWithFlag(args, "--method", a["method"]);
  if (step == "devices") {
    return LvWithFlag(LvWithFlag(args, "--devices", std::to_string(a["value"].get<int64_t>())),
                      "--sharding", a["sharding"]);
  }
  std::vector<std::string> out = args;
  out[1] = a["model"];  // "model"
  return out;
}

std::string LvVerdictWord(const nlohmann::json& key) {
  return key == "does_not_fit" ? "does not fit" : key.get<std::string>();
}

// Every advice entry of the plan of `args` that proposes flags is the verdict of the plan of
// those flags: the same verdict, the same peak, and its line says the same word. "The
// largest that fits" is the largest: one more does not fit. Returns the entries checked.
std::vector<std::string> CheckAdviceAgrees(const std::vector<std::string>& args) {
  std::vector<std::string> steps;
  const LvPlanned plan = LvPlanJson(args);
  EXPECT_NE(plan.j["verdict"], "fits");
  for (const auto& a : plan.j["advice"]) {
    const std::string step = a["step"];
    EXPECT_TRUE(a.contains("verdict")) << a.dump();
    if (!a.contains("verdict")) continue;
    if (step == "model" && !a.contains("model")) continue;  // no plan proposed
    if (step == "seq" && a["value"].is_null()) continue;
    SCOPED_TRACE(a.dump());
    const LvPlanned proposed = LvPlanJson(LvProposed(args, a));
    EXPECT_EQ(a["verdict"], proposed.j["verdict"]);
    EXPECT_EQ(a["peak_bytes"], proposed.j["peak_bytes"]);
    EXPECT_EQ(proposed.status, proposed.j["verdict"] == "does_not_fit" ? 1 : 0);
    const std::string text = a["text"];
    if (step == "method" || step == "devices") {
      EXPECT_NE(text.find("(" + LvVerdictWord(a["verdict"])), std::string::npos) << text;
    } else {
      EXPECT_NE(text.find("fits"), std::string::npos) << text;
      EXPECT_EQ(a["verdict"], "fits");
    }
    if (step == "seq" || step == "batch") {
      const std::string flag = "--" + step;
      const auto one_more =
          LvPlanJson(LvWithFlag(args, flag, std::to_string(a["value"].get<int64_t>() + 1)));
      EXPECT_NE(one_more.j["verdict"], "fits") << flag << " one more";
    }
    steps.push_back(step);
  }
  return steps;
}

// The case: batch 10 leaves 9.39 GiB of MemAvailable, under the guard's kill level
// (and less still once the OS's reserve is set aside): it does not fit, exit 1. It was
// "tight" with exit 0.
TEST(PlanLevelsCli, SparkBatch10LeavesLessThanTheKillLevelAndDoesNotFit) {
  const auto args = LvSparkPlan({"--batch", "10", "--seq", "4096"});
  const LvPlanned p = LvPlanJson(args);
  EXPECT_EQ(p.status, 1);
  EXPECT_EQ(p.j["verdict"], "does_not_fit");
  ASSERT_TRUE(p.j.contains("levels"));
  const auto& l = p.j["levels"];
  EXPECT_EQ(l["kill"]["bytes"], kSparkKill);
  EXPECT_EQ(l["warn"]["bytes"], kSparkWarn);
  EXPECT_EQ(l["reserve"]["bytes"], kLvReserve);
  EXPECT_EQ(l["kill"]["source"], "default");
  EXPECT_EQ(l["available_bytes"], p.j["budget"]["mem_available_bytes"]);
  EXPECT_EQ(l["leftover_bytes"].get<int64_t>(),
            l["available_bytes"].get<int64_t>() - p.j["peak_bytes"].get<int64_t>());
  EXPECT_LT(l["leftover_bytes"].get<uint64_t>(), kSparkKill);
  const auto r = RunCli(args);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("below the guard's kill level 9.74 GiB: the guard would kill it"),
            std::string::npos)
      << r.out;
}

// Batch 9 leaves 18.03 GiB, 14.03 GiB once the 4 GiB reserve is set aside: between the
// guard's levels, so "tight", and the plan says so with both figures. It "fitted" before.
TEST(PlanLevelsCli, SparkBatch9BetweenTheLevelsIsTightAndSaysSo) {
  const auto args = LvSparkPlan({"--batch", "9", "--seq", "4096"});
  const LvPlanned p = LvPlanJson(args);
  EXPECT_EQ(p.status, 0);
  EXPECT_EQ(p.j["verdict"], "tight");
  ASSERT_TRUE(p.j.contains("levels"));
  const auto left = p.j["levels"]["leftover_bytes"].get<uint64_t>() - kLvReserve;
  EXPECT_LT(left, kSparkWarn);
  EXPECT_GE(left, kSparkKill);
  const auto r = RunCli(args);
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("tight: leaves 18.03 GiB, 14.03 GiB once the reserve for the OS (4.00 "
                       "GiB) is set aside: below the guard's warning level 19.47 GiB, above its "
                       "kill level 9.74 GiB; the companion will be asked for a checkpoint"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(p.j["levels"]["text"],
            "leaves 18.03 GiB, 14.03 GiB once the reserve for the OS (4.00 GiB) is set aside: "
            "below the guard's warning level 19.47 GiB, above its kill level 9.74 GiB; the "
            "companion will be asked for a checkpoint");
}

// Each advice line of the issue's case against the plan of its flags: "--batch 9 is the
// largest that fits" was printed while --batch 9 crossed the warning level; the two-Spark
// line said "still over" where that plan is "tight".
TEST(PlanLevelsCli, AdviceOfSparkBatch10IsTheVerdictOfEachProposedPlan) {
  const auto steps = CheckAdviceAgrees(LvSparkPlan({"--batch", "10", "--seq", "4096"}));
  EXPECT_EQ(steps, (std::vector<std::string>{"seq", "batch", "method", "model", "devices"}));
}

// The case: --method qlora and --devices 2 --sharding fsdp plan "tight", and their
// advice lines said "(still over)"; they say "(tight)" now.
TEST(PlanLevelsCli, TightMethodAndDevicesAdviceSayTight) {
  const auto args = LvSparkPlan({"--batch", "10", "--seq", "4096"});
  const LvPlanned p = LvPlanJson(args);
  bool method_tight = false, devices_tight = false;
  for (const auto& a : p.j["advice"]) {
    const std::string verdict = a.value("verdict", "");
    if (a["step"] == "method" && verdict == "tight") method_tight = true;
    if (a["step"] == "devices" && verdict == "tight") devices_tight = true;
  }
  EXPECT_TRUE(method_tight) << p.j["advice"].dump();
  EXPECT_TRUE(devices_tight) << p.j["advice"].dump();
  const auto r = RunCli(args);
  EXPECT_NE(r.out.find("switch to --method qlora: peak 102.12 GB (tight)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("--devices 2 --sharding fsdp: peak 107.56 GB per node (tight)"),
            std::string::npos)
      << r.out;
}

// Over on every count: a 70B full fine-tune; the two-Spark plan does not fit either.
TEST(PlanLevelsCli, AdviceOfA70bFullFineTuneIsTheVerdictOfEachProposedPlan) {
  std::vector<std::string> args = {"plan", "llama-3.1-70b", "--method",
                                   "full", "--root",        kSparkIdle};
  const auto steps = CheckAdviceAgrees(args);
  EXPECT_FALSE(steps.empty());
}

// plan and config show (what guard and sweep use) agree on the Spark fixture: the same
// levels, and a plan that fits leaves at least the warning level (after the reserve), a tight
// one at least the kill level. A kill level set in the environment moves both.
TEST(PlanLevelsCli, PlanAndConfigShowAgreeOnTheLevels) {
  for (const std::vector<std::string>& env :
       {std::vector<std::string>{}, std::vector<std::string>{"HEADROOM_KILL_LEVEL=12%"}}) {
    SCOPED_TRACE(env.empty() ? "defaults" : env[0]);
    const auto show = RunCli({"config", "show", "--json"}, 20000, env);
    ASSERT_EQ(show.status, 0) << show.err;
    const auto config = nlohmann::json::parse(show.out, nullptr, false);
    ASSERT_TRUE(config.is_object());
    ASSERT_TRUE(config.contains("levels"));
    const auto& spark = config["levels"]["gb10"];
    EXPECT_EQ(spark["mem_total_bytes"], kSparkMemTotal);
    if (env.empty()) {
      EXPECT_EQ(spark["kill"]["bytes"], kSparkKill);
      EXPECT_EQ(spark["kill"]["source"], "default");
    } else {
      EXPECT_EQ(spark["kill"]["bytes"], static_cast<uint64_t>(0.12 * kSparkMemTotal));
      EXPECT_EQ(spark["kill"]["source"], "config");
      EXPECT_EQ(spark["kill"]["where"], "guard.kill_level (HEADROOM_KILL_LEVEL)");
    }
    const uint64_t warn = spark["warn"]["bytes"], kill = spark["kill"]["bytes"],
                   reserve = spark["reserve"]["bytes"];
    int seen_fits = 0, seen_tight = 0;
    for (int batch = 6; batch <= 11; ++batch) {
      const LvPlanned p =
          LvPlanJson(LvSparkPlan({"--batch", std::to_string(batch), "--seq", "4096"}), env);
      ASSERT_TRUE(p.j.contains("levels"));
      const auto& l = p.j["levels"];
      EXPECT_EQ(l["warn"]["bytes"], warn);
      EXPECT_EQ(l["kill"]["bytes"], kill);
      EXPECT_EQ(l["reserve"]["bytes"], reserve);
      const int64_t left = l["leftover_bytes"].get<int64_t>() - static_cast<int64_t>(reserve);
      if (p.j["verdict"] == "fits") {
        ++seen_fits;
        EXPECT_GE(left, static_cast<int64_t>(warn)) << batch;
      } else if (p.j["verdict"] == "tight") {
        ++seen_tight;
        EXPECT_LT(left, static_cast<int64_t>(warn)) << batch;
        EXPECT_GE(left, static_cast<int64_t>(kill)) << batch;
      } else {
        EXPECT_LT(left, static_cast<int64_t>(kill)) << batch;
      }
    }
    EXPECT_GT(seen_fits, 0);
  }
}

// `config show` draws the levels on this machine and on a Spark, each with its source. With
// the warning level at 30 GiB a Spark's sweep limit keeps the reserve and that level free:
// 121.69 - (4 + 30) = 87.69 GiB (the owners' 28 GB is less).
TEST(PlanLevelsCli, ConfigShowPrintsTheLevelsOnASpark) {
  const auto r = RunCli({"config", "show"}, 20000, {"HEADROOM_WARN_LEVEL=30GiB"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* want :
       {"levels (docs/config.md \"The levels\"):", "A SPARK (GB10)", "121.69 GiB", "9.74 GiB",
        "default: the larger of 4 GiB and 8 % of MemTotal", "30.00 GiB",
        "guard.warn_level (HEADROOM_WARN_LEVEL)", "87.69 GiB", "sweep limit"}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  }
}

}  // namespace
}  // namespace headroom
