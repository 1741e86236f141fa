// One truth across commands (docs/config.md "The levels"): plan, guard and sweep, run on the
// same machine, use the same kill and warning levels, and plan's verdict means what the guard
// will do: a plan that fits leaves at least the guard's warning level (and the reserve) free,
// a plan that is not "does not fit" stays above the guard's kill level, and the sweep's limit
// leaves what plan calls a fit. Checked on the Spark fixture and on a box with a discrete GPU
// (the fake NVML as an H200) and 19.9 GB of host memory.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_cli.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::RunCli;

nlohmann::json TruthJson(const testing::CliResult& r, const std::string& what) {
  EXPECT_FALSE(r.timed_out) << what;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_TRUE(j.is_object()) << what << ": " << r.out << r.err;
  return j.is_object() ? j : nlohmann::json::object();
}

// The three commands' levels on one root, with `env` (the fake NVML, where one is used).
struct Levels {
  nlohmann::json plan_levels;  // plan --json's "levels"
  uint64_t guard_kill = 0, guard_warn = 0;
  uint64_t sweep_kill = 0, sweep_limit = 0;
  uint64_t mem_total = 0;
};

Levels ReadLevels(const std::string& root, const std::vector<std::string>& plan_extra,
                  const std::vector<std::string>& env, const testing::TempDir& state) {
  Levels l;
  std::vector<std::string> plan = {"plan", "llama-3.1-8b", "--root", root, "--json"};
  plan.insert(plan.end(), plan_extra.begin(), plan_extra.end());
  const auto p = TruthJson(RunCli(plan, 20000, env), "plan");
  l.plan_levels = p["levels"];

  const auto g =
      RunCli({"guard", "--root", root, "--json", "--no-journal", "--", "true"}, 20000, env);
  EXPECT_EQ(g.status, 0) << g.out << g.err;
  const auto gj = TruthJson(g, "guard");
  l.guard_kill = gj.value("kill_below_bytes", uint64_t{0});
  l.guard_warn = gj.value("warn_below_bytes", uint64_t{0});
  l.mem_total = gj.value("mem_total_bytes", uint64_t{0});

  std::vector<std::string> sweep_env = env;
  sweep_env.push_back("XDG_STATE_HOME=" + state.path().string());
  sweep_env.push_back("HOME=" + state.path().string());
  // --require-available: the small box's 19.9 GB is under the sweep's default room to start
  // (the limit plus the kill level); the levels are what this test compares.
  const auto s = RunCli({"sweep", "--root", root, "--json", "--fresh", "--require-available",
                         "1GiB", "--batch", "1", "--", "sh", "-c", "test {batch} = 1"},
                        60000, sweep_env);
  EXPECT_EQ(s.status, 0) << s.out << s.err;
  const auto sj = TruthJson(s, "sweep");
  l.sweep_kill = sj.value("kill_below_bytes", uint64_t{0});
  l.sweep_limit = sj.value("limit_bytes", uint64_t{0});
  return l;
}

uint64_t LevelBytes(const nlohmann::json& levels, const char* name) {
  return levels.contains(name) ? levels[name].value("bytes", uint64_t{0}) : 0;
}

// The levels agree, and the sweep's limit leaves at least what plan calls a fit.
void ExpectOneSetOfLevels(const Levels& l) {
  const uint64_t kill = LevelBytes(l.plan_levels, "kill");
  const uint64_t warn = LevelBytes(l.plan_levels, "warn");
  const uint64_t reserve = LevelBytes(l.plan_levels, "reserve");
  ASSERT_GT(kill, 0u) << l.plan_levels.dump();
  EXPECT_EQ(kill, l.guard_kill);
  EXPECT_EQ(kill, l.sweep_kill);
  EXPECT_EQ(warn, l.guard_warn);
  EXPECT_GT(warn, kill);
  EXPECT_EQ(l.plan_levels.value("fit_bytes", uint64_t{0}), reserve + warn);
  EXPECT_EQ(l.plan_levels.value("floor_bytes", uint64_t{0}), reserve + kill);
  ASSERT_GT(l.mem_total, l.sweep_limit);
  // A trial at the sweep's limit (a pool use) leaves MemTotal - limit of MemAvailable: no less
  // than a plan that fits leaves, so the guard of a swept answer neither warns nor kills.
  EXPECT_GE(l.mem_total - l.sweep_limit, reserve + warn);
}

// For each batch, plan's verdict against what its peak leaves of MemAvailable and the guard's
// levels: fits leaves the reserve and the warning level; tight stays above the reserve and the
// kill level; does not fit is below that. Returns the verdicts seen.
std::vector<std::string> ExpectVerdictsMeanTheGuard(const std::string& root,
                                                    const std::vector<std::string>& extra,
                                                    const std::vector<std::string>& env,
                                                    const Levels& l, int max_batch) {
  std::vector<std::string> seen;
  for (int batch = 1; batch <= max_batch; ++batch) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    std::vector<std::string> args = {"plan",    "llama-3.1-8b",       "--root", root, "--json",
                                     "--batch", std::to_string(batch)};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = RunCli(args, 20000, env);
    const auto j = TruthJson(r, "plan");
    const std::string verdict = j.value("verdict", std::string());
    const auto& lv = j["levels"];
    const int64_t left = lv.value("leftover_bytes", int64_t{0});
    EXPECT_EQ(left, static_cast<int64_t>(lv.value("available_bytes", uint64_t{0})) -
                        static_cast<int64_t>(j.value("peak_bytes", uint64_t{0})));
    const int64_t reserve = static_cast<int64_t>(LevelBytes(lv, "reserve"));
    const int64_t warn = static_cast<int64_t>(l.guard_warn);
    const int64_t kill = static_cast<int64_t>(l.guard_kill);
    if (verdict == "fits") {
      EXPECT_GE(left - reserve, warn);
    } else if (verdict == "tight") {
      EXPECT_LT(left - reserve, warn);
      EXPECT_GE(left - reserve, kill);
    } else {
      EXPECT_EQ(verdict, "does_not_fit");
      EXPECT_LT(left - reserve, kill);
    }
    EXPECT_EQ(r.status, verdict == "does_not_fit" ? 1 : 0) << r.err;
    if (seen.empty() || seen.back() != verdict) seen.push_back(verdict);
  }
  return seen;
}

// The Spark fixture: an idle Spark (MemTotal 127,600,748 kB, MemAvailable 115 GiB). The 8B
// full fine-tune at --seq 4096 crosses from fits through tight to does not fit as the batch
// grows; each verdict says what the guard will do.
TEST(OneTruthCli, PlanGuardAndSweepAgreeOnTheSparkFixture) {
  const std::string root = testing::kFixtures + "gb10-idle";
  testing::TempDir state{"one-truth-spark"};
  const Levels l = ReadLevels(root, {}, {}, state);
  ExpectOneSetOfLevels(l);
  // A Spark's levels: kill 8 % of MemTotal, warn twice it.
  EXPECT_EQ(l.guard_kill, 127600748ULL * 1024 * 8 / 100);
  EXPECT_EQ(l.guard_warn, 2 * l.guard_kill);
  const auto seen =
      ExpectVerdictsMeanTheGuard(root, {"--seq", "4096", "--method", "full"}, {}, l, 12);
  EXPECT_EQ(seen, (std::vector<std::string>{"fits", "tight", "does_not_fit"}));
}

// A discrete GPU (the fake NVML's H200, 141 GB of its own) on a box with 19.9 GB of host
// memory: the three commands' host levels are the same; the device is judged on its own pool.
TEST(OneTruthCli, PlanGuardAndSweepAgreeOnADiscreteFakeGpu) {
  testing::TempDir dir{"one-truth-discrete"};
  testing::WriteFile(dir / "proc/meminfo",
                     "MemTotal:       24576000 kB\nMemFree:        18000000 kB\n"
                     "MemAvailable:   19433594 kB\nBuffers:          100000 kB\n"
                     "Cached:          1500000 kB\n");
  testing::WriteFile(dir / "nvml", "scenario discrete\n");
  const std::vector<std::string> env = {
      "HEADROOM_FAKE_NVML_SCRIPT=" + (dir / "nvml").string(),
      std::string("HEADROOM_NVML_LIB=") + HEADROOM_FAKE_NVML_PATH};
  const std::string root = dir.path().string();
  testing::TempDir state{"one-truth-discrete-state"};
  const Levels l = ReadLevels(root, {"--method", "lora"}, env, state);
  ExpectOneSetOfLevels(l);
  // A 24 GB box: kill the larger of 4 GiB and 8 % (4 GiB), warn twice it.
  EXPECT_EQ(l.guard_kill, 4ULL << 30);
  EXPECT_EQ(l.guard_warn, 8ULL << 30);
  // The LoRA is judged on the device and on the host, each by its own rule; the plan's host
  // pool is judged with the levels the guard uses.
  const auto r =
      RunCli({"plan", "llama-3.1-8b", "--method", "lora", "--root", root, "--json"}, 20000, env);
  const auto j = TruthJson(r, "plan");
  ASSERT_TRUE(j.contains("pools")) << r.out;
  bool device = false, host = false;
  for (const auto& p : j["pools"]) {
    if (p["pool"] == "device") device = p["verdict"] == "fits";
    if (p["pool"] == "host") {
      host = true;
      const int64_t left = static_cast<int64_t>(j["levels"].value("available_bytes", uint64_t{0})) -
                           static_cast<int64_t>(p.value("need_bytes", uint64_t{0}));
      const int64_t fit = static_cast<int64_t>(LevelBytes(j["levels"], "reserve") + l.guard_warn);
      EXPECT_EQ(p["verdict"] == "fits", left >= fit) << p.dump();
    }
  }
  EXPECT_TRUE(device) << j["pools"].dump();
  EXPECT_TRUE(host) << j["pools"].dump();
  EXPECT_EQ(j.value("verdict", std::string()), "fits") << r.out;
}

}  // namespace
}  // namespace headroom
