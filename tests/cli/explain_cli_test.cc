// `headroom explain` end to end: the real binary on synthetic runs written to a temporary
// directory (tests/explain/synthetic_run.h), plus its input errors and exit statuses.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../explain/synthetic_run.h"
#include "run_cli.h"
#include "testing_files.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using testing::MakeSyntheticRun;
using testing::RunCli;
using testing::Scenario;

class ExplainCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("headroom-explain-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  // Writes the run's files; returns {log, samples, events}.
  std::vector<std::string> WriteRun(const testing::SyntheticRun& run) {
    return {Write("train.log", run.log), Write("samples.csv", run.samples_csv),
            Write("events.jsonl", run.events_jsonl)};
  }

  fs::path dir_;
};

size_t LineCount(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

TEST_F(ExplainCli, ThermalTableNamesVerdictEvidenceAndAdvice) {
  const auto f = WriteRun(MakeSyntheticRun(Scenario::kThermalPlateau));
  const auto r = RunCli({"explain", "--log", f[0], "--samples", f[1]});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("tqdm, 299 steps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("platform gb10 (from header)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("baseline:  0.500 s/step"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("#1 steps 120-200, 2026-11-29T10:00:59.500Z"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("verdict: thermal"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("evidence: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("power flat"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("advice: expected platform behaviour"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unavailable: other GPU processes: no --events file"), std::string::npos)
      << r.out;
}

TEST_F(ExplainCli, JsonParsesWithSchemaVersionAndVerdicts) {
  const auto f = WriteRun(MakeSyntheticRun(Scenario::kClockCollapse, 300, 120, 200, 3.0));
  const auto r = RunCli({"explain", "--log", f[0], "--samples", f[1], "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["log"]["format"], "tqdm");
  EXPECT_EQ(j["log"]["timing"], "timestamps");
  EXPECT_EQ(j["samples"]["platform"], "gb10");
  EXPECT_NEAR(j["baseline"]["seconds_per_step"].get<double>(), 0.5, 1e-6);
  ASSERT_EQ(j["windows"].size(), 1u);
  const auto& w = j["windows"][0];
  EXPECT_EQ(w["verdict"], "clock-collapse");
  EXPECT_EQ(w["first_step"], 120);
  EXPECT_EQ(w["last_step"], 200);
  EXPECT_EQ(w["start_time"], "2026-11-29T10:00:59.500Z");
  EXPECT_NE(w["advice"].get<std::string>().find("unplug"), std::string::npos);
  EXPECT_EQ(w["readings"]["sm_clock_mhz_median"], 700.0);
  EXPECT_GE(j["series"].size(), 2u);
}

TEST_F(ExplainCli, ContentionWithEventsAndCleanRun) {
  const auto f = WriteRun(MakeSyntheticRun(Scenario::kContention));
  const auto r = RunCli({"explain", "--log", f[0], "--samples", f[1], "--events", f[2], "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_EQ(j["windows"].size(), 1u);
  EXPECT_EQ(j["windows"][0]["verdict"], "contention");
  EXPECT_EQ(j["events"]["count"], 1);

  const auto c = WriteRun(MakeSyntheticRun(Scenario::kClean));
  const auto clean = RunCli({"explain", "--log", c[0], "--samples", c[1]});
  EXPECT_EQ(clean.status, 0) << clean.err;
  EXPECT_NE(clean.out.find("): none"), std::string::npos) << clean.out;
  EXPECT_EQ(clean.out.find("verdict:"), std::string::npos) << clean.out;
}

TEST_F(ExplainCli, WithoutSamplesStillFindsWindows) {
  const auto f = WriteRun(MakeSyntheticRun(Scenario::kUnexplained));
  const auto r = RunCli({"explain", "--log", f[0]});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("verdict: unexplained"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unavailable: samples: no --samples file"), std::string::npos) << r.out;
  // Issue 31: with no samples nothing was searched, so "no cause in the samples" was wrong.
  EXPECT_NE(r.out.find("advice: no samples cover this slowdown: run the job under `headroom watch` "
                       "to diagnose this"),
            std::string::npos)
      << r.out;
}

TEST_F(ExplainCli, MissingLogIsOneLineNamingTheFileExit2) {
  const std::string missing = (dir_ / "nope.log").string();
  const auto r = RunCli({"explain", "--log", missing});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(LineCount(r.err), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("headroom: explain: --log: open(" + missing + "): ", 0), 0u) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(ExplainCli, SamplesWithoutHeaderIsOneLineNamingTheFileExit2) {
  const auto f = WriteRun(MakeSyntheticRun(Scenario::kThermalBit));
  const std::string bad = Write("bad.csv", "timestamp,power.draw\n2026-11-29T10:00:00Z,100\n");
  const auto r = RunCli({"explain", "--log", f[0], "--samples", bad});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(LineCount(r.err), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("headroom: explain: --samples: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
  const auto missing =
      RunCli({"explain", "--log", f[0], "--samples", (dir_ / "none.csv").string()});
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("none.csv"), std::string::npos) << missing.err;
}

TEST_F(ExplainCli, LogWithoutStepsExit1) {
  const std::string log = Write("empty.log", "hello\nloading model\ndone\n");
  const auto r = RunCli({"explain", "--log", log});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(LineCount(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("no step series in " + log), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--step-regex"), std::string::npos) << r.err;
}

TEST_F(ExplainCli, UsageErrors) {
  const auto f = WriteRun(MakeSyntheticRun(Scenario::kClean));
  const auto platform = RunCli({"explain", "--log", f[0], "--platform", "tpu"});
  EXPECT_EQ(platform.status, 2);
  EXPECT_NE(platform.err.find("--platform: 'tpu'"), std::string::npos) << platform.err;
  const auto regex = RunCli({"explain", "--log", f[0], "--step-regex", "("});
  EXPECT_EQ(regex.status, 2);
  EXPECT_NE(regex.err.find("--step-regex"), std::string::npos) << regex.err;
  EXPECT_EQ(RunCli({"explain"}).status, 2);
  const auto help = RunCli({"explain", "--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("--samples"), std::string::npos);
  EXPECT_NE(RunCli({"--help"}).out.find("explain"), std::string::npos);
}

TEST_F(ExplainCli, ABacktrackingStepRegexFinishesOnLongLines) {
  // Regression: '(?<step>\d+)((.|x)*)z' on long lines ran past 30 s with std::regex. 1,000
  // lines of 8 KiB that never match, then two that do: RE2 finishes in a fraction of a
  // second; the 15 s bound is what the test allows, not a figure.
  std::string log;
  for (int i = 0; i < 1000; ++i) log += "1" + std::string(8192, 'x') + "\n";
  log += "step 1 xz\nstep 2 xxz\n";
  const std::string path = Write("long.log", log);
  const auto r =
      RunCli({"explain", "--log", path, "--step-regex", "(?<step>\\d+)((.|x)*)z"}, 15000);
  EXPECT_FALSE(r.timed_out);
  // Two records give one interval: fewer than the series needs, so status 1 and one line.
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(LineCount(r.err), 1u) << r.err;
}

TEST_F(ExplainCli, PlatformNoneOverridesTheHeader) {
  const auto f = WriteRun(MakeSyntheticRun(Scenario::kClockCollapse, 300, 120, 200, 3.0));
  const auto r = RunCli({"explain", "--log", f[0], "--samples", f[1], "--platform", "none"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("platform none (from flag)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unavailable: GPU: platform none"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace headroom

namespace headroom {
namespace {

// `watch --journal` records its files; `explain --run ID` finds them there.
TEST_F(ExplainCli, RunFromTheJournalUsesTheFilesWatchRecorded) {
  const std::string journal = (dir_ / "journal.db").string();
  const std::string log = (dir_ / "job.log").string();
  const auto w = RunCli(
      {"watch", "--journal", journal, "--interval", "100ms", "--out", (dir_ / "s.csv").string(),
       "--log", log, "--nvml-lib", "/nonexistent/libnvidia-ml.so.1", "--", "sh", "-c",
       "i=0; while [ $i -lt 30 ]; do i=$((i+1)); echo \"{\\\"step\\\": $i, \\\"loss\\\": 1.5}\"; "
       "sleep 0.03; done"},
      20000);
  ASSERT_EQ(w.status, 0) << w.err;
  EXPECT_NE(w.err.find("headroom watch: run 1 in " + journal), std::string::npos) << w.err;
  const auto r = RunCli({"explain", "--run", "1", "--journal", journal, "--json"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(log), std::string::npos) << r.out;
  EXPECT_NE(r.out.find((dir_ / "s.csv").string()), std::string::npos) << r.out;
  const auto missing = RunCli({"explain", "--run", "7", "--journal", journal});
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("--run 7: no such run in " + journal), std::string::npos)
      << missing.err;
  EXPECT_EQ(LineCount(missing.err), 1u);
  const auto none = RunCli({"explain", "--run", "1", "--journal", (dir_ / "absent.db").string()});
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.err.find("no journal at"), std::string::npos) << none.err;
}

// The companion's step records given as the log: read as such, and said so.
TEST(ExplainCompanion, ReadsTheCompanionsStepRecordsAndSaysSo) {
  testing::TempDir dir;
  std::string text;
  for (int i = 0; i <= 40; ++i) {
    const double wall = 1764745200.0 + 0.5 * i + (i > 30 ? 3.0 : 0.0);  // one slow step
    text += "{\"schema\":\"headroom.step/1\",\"pid\":77,\"kind\":\"step\",\"step\":" +
            std::to_string(i) + ",\"wall\":" + std::to_string(wall) +
            ",\"mono\":" + std::to_string(wall - 1764740000.0) + ",\"loss\":1.5}\n";
  }
  testing::WriteFile(dir / "steps.jsonl", text);
  const auto r = RunCli({"explain", "--log", dir.File("steps.jsonl"), "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["log"]["format"], "headroom-step") << r.out;
  EXPECT_NE(j.dump().find("steps from the companion's step records"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace headroom
