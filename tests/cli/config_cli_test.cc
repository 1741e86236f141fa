// `headroom config` and the configuration end to end: the real binary with HOME and
// XDG_CONFIG_HOME pointed at a temporary directory. What `config show` reports for each
// origin, a broken file stopping a command (and shown by `config`), and proof that the
// commands use the settings: plan's budget, guard's kill level, watch's interval, the
// journal history reads, the platform explain assumes, ps's reserve, export's interval.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "../explain/synthetic_run.h"
#include "run_cli.h"
#include "sys/meminfo.h"
#include "testing_files.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using testing::kFixtures;
using testing::RunCli;

class ConfigCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("headroom-config-cli-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "xdg" / "headroom");
    fs::create_directories(dir_ / "state");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A copy of a fixture tree, so a test can check that a command wrote nothing below its
  // --root (GuardAndWatchUnderRootWriteNothingBelowIt).
  std::string FixtureCopy(const std::string& name) const {
    const fs::path to = dir_ / ("root-" + name);
    fs::copy(kFixtures + name, to,
             fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    return to.string();
  }
  std::string ConfigPath() const { return (dir_ / "xdg" / "headroom" / "config.toml").string(); }
  void WriteConfig(const std::string& text) const {
    std::ofstream(ConfigPath(), std::ios::binary) << text;
  }
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return (dir_ / name).string();
  }

  // The environment of every run: this test's HOME and XDG directories, and every
  // HEADROOM_* setting variable unset (empty counts as unset), plus `extra`.
  std::vector<std::string> Env(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> env = {"HOME=" + dir_.string(),
                                    "XDG_CONFIG_HOME=" + (dir_ / "xdg").string(),
                                    "XDG_STATE_HOME=" + (dir_ / "state").string(),
                                    "LANGUAGE=",
                                    "LC_ALL=C",
                                    "HEADROOM_NVML_LIB=/nonexistent/libnvidia-ml.so.1"};
    for (const char* v : {"HEADROOM_CONFIG", "HEADROOM_JOURNAL", "HEADROOM_RESERVE",
                          "HEADROOM_KILL_LEVEL", "HEADROOM_WARN_LEVEL", "HEADROOM_WATCH_INTERVAL",
                          "HEADROOM_TOP_INTERVAL", "HEADROOM_EXPORT_INTERVAL", "HEADROOM_PLATFORM",
                          "HEADROOM_SUSTAINED_POWER_W", "HEADROOM_RATED_POWER_W"}) {
      env.push_back(std::string(v) + "=");
    }
    env.insert(env.end(), extra.begin(), extra.end());
    return env;
  }
  testing::CliResult Run(const std::vector<std::string>& args,
                         const std::vector<std::string>& extra = {}, int timeout_ms = 20000) const {
    return RunCli(args, timeout_ms, Env(extra));
  }
  nlohmann::json ShowJson(const std::vector<std::string>& flags = {},
                          const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"config", "show", "--json"};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto r = Run(args, extra);
    EXPECT_EQ(r.status, 0) << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  }
  static nlohmann::json Row(const nlohmann::json& show, const std::string& key) {
    for (const auto& row : show["settings"]) {
      if (row["key"] == key) return row;
    }
    ADD_FAILURE() << "no row " << key;
    return {};
  }

  fs::path dir_;
};

TEST_F(ConfigCli, ShowDefaultsWithoutAFile) {
  const auto r = Run({"config", "show"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(
      r.out.find("configuration file: " + ConfigPath() + " (not found; named by XDG_CONFIG_HOME)"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("plan.reserve"), std::string::npos);
  EXPECT_NE(r.out.find("the larger of 4GiB and 8% of MemTotal"), std::string::npos);
  EXPECT_EQ(r.err, "");
  const auto j = ShowJson();
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["file"]["path"], ConfigPath());
  EXPECT_EQ(j["file"]["exists"], false);
  EXPECT_EQ(j["settings"].size(), 13u);  // AllSettings(), [guardian] included
  for (const auto& row : j["settings"]) EXPECT_EQ(row["origin"], "default") << row["key"];
  EXPECT_EQ(Row(j, "plan.reserve")["bytes"], 4ULL << 30);
  EXPECT_EQ(Row(j, "watch.interval")["milliseconds"], 30000);
  EXPECT_EQ(Row(j, "journal")["value"], (dir_ / "state" / "headroom" / "journal.db").string());
  EXPECT_TRUE(Row(j, "guard.kill_level")["bytes"].is_null());
  EXPECT_EQ(Run({"config", "path"}).out, ConfigPath() + "\n");
  EXPECT_EQ(Run({"config"}).status, 0);  // `config` alone is `config show`
}

TEST_F(ConfigCli, ShowEachOrigin) {
  WriteConfig(
      "schema_version = 1\n[plan]\nreserve = \"6GiB\"\n[guard]\nkill_level = \"10%\"\n"
      "[watch]\ninterval = \"10s\"\n[platform]\nkind = \"gb10\"\n");
  const auto j = ShowJson({"--watch-interval", "2s"}, {"HEADROOM_KILL_LEVEL=12GiB"});
  EXPECT_EQ(j["file"]["exists"], true);
  const auto reserve = Row(j, "plan.reserve");
  EXPECT_EQ(reserve["origin"], "file");
  EXPECT_EQ(reserve["where"], ConfigPath() + ":3");
  EXPECT_EQ(reserve["value"], "6GiB");
  EXPECT_EQ(reserve["bytes"], 6ULL << 30);
  const auto kill = Row(j, "guard.kill_level");
  EXPECT_EQ(kill["origin"], "environment");
  EXPECT_EQ(kill["where"], "HEADROOM_KILL_LEVEL");
  EXPECT_EQ(kill["bytes"], 12ULL << 30);
  const auto watch = Row(j, "watch.interval");
  EXPECT_EQ(watch["origin"], "flag");
  EXPECT_EQ(watch["where"], "--watch-interval");
  EXPECT_EQ(watch["milliseconds"], 2000);
  EXPECT_EQ(Row(j, "platform.kind")["value"], "gb10");
  EXPECT_EQ(Row(j, "top.interval")["origin"], "default");
  // The text table says the same.
  const auto text =
      Run({"config", "show", "--watch-interval", "2s"}, {"HEADROOM_KILL_LEVEL=12GiB"});
  EXPECT_EQ(text.status, 0) << text.err;
  for (const std::string& want : std::vector<std::string>{
           "6GiB", "file", ConfigPath() + ":3", "12GiB", "environment", "HEADROOM_KILL_LEVEL", "2s",
           "flag", "--watch-interval", "(found; named by XDG_CONFIG_HOME)"}) {
    EXPECT_NE(text.out.find(want), std::string::npos) << want << "\n" << text.out;
  }
}

TEST_F(ConfigCli, ExplicitPathMustExist) {
  const std::string named = (dir_ / "named.toml").string();
  auto r = Run({"config", "path"}, {"HEADROOM_CONFIG=" + named});
  EXPECT_EQ(r.out, named + "\n");
  r = Run({"history"}, {"HEADROOM_CONFIG=" + named});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "headroom: config: " + named + ": no such file (named by HEADROOM_CONFIG)\n");
}

TEST_F(ConfigCli, BrokenFileStopsCommandsWithOneLineAndConfigShowsIt) {
  WriteConfig("[plan]\nreserve = \"6GiB\"\n\n[guard]\nkill_levle = \"8%\"\n");
  const std::string line = "headroom: config: " + ConfigPath() +
                           ":5: unknown key 'kill_levle' in [guard] (did you mean kill_level?)\n";
  auto r = Run({"plan", "llama-3.1-8b", "--root", kFixtures + "gb10-idle"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, line);
  EXPECT_EQ(r.out, "");
  r = Run({"history"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, line);
  EXPECT_EQ(Run({"doctor", "--no-bandwidth"}).status, 3);  // doctor's usage status (2 is "blocked")
  // --help, --version and the config commands still work; config shows the error.
  r = Run({"--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, line);
  EXPECT_EQ(Run({"--version"}).status, 0);
  EXPECT_EQ(Run({"plan", "--help"}).status, 0);
  r = Run({"config", "show"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, line);
  EXPECT_NE(r.out.find("1 error(s) on stderr"), std::string::npos) << r.out;
  r = Run({"config", "show", "--json"});
  EXPECT_EQ(r.status, 2);
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  ASSERT_EQ(j["errors"].size(), 1u);
  EXPECT_EQ("headroom: " + j["errors"][0].get<std::string>() + "\n", line);
  EXPECT_EQ(Row(j, "plan.reserve")["origin"], "default");  // nothing of a broken file is used
  r = Run({"config", "check"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, line);
  EXPECT_EQ(Run({"config", "path"}).status, 0);
}

TEST_F(ConfigCli, BrokenVariableStopsCommands) {
  const auto r = Run({"history"}, {"HEADROOM_WATCH_INTERVAL=10ms"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "headroom: config: HEADROOM_WATCH_INTERVAL: '10ms' is below the minimum of 100ms\n");
}

TEST_F(ConfigCli, CheckAFile) {
  const std::string good =
      Write("good.toml", "[plan]\nreserve = \"6GiB\"\n[platform]\nrated_power_w = 240\n");
  auto r = Run({"config", "check", good});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, good + ": ok: 2 settings (schema_version 1)\n");
  const std::string bad =
      Write("bad.toml", "[platform]\nsustained_power_w = 300\nrated_power_w = 240\n");
  r = Run({"config", "check", bad});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "headroom: config: sustained power 300 W (" + bad +
                       ":2) is above the rated 240 W (" + bad + ":3)\n");
  r = Run({"config", "check", (dir_ / "none.toml").string()});
  EXPECT_EQ(r.status, 2);
  r = Run({"config", "check", dir_.string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "headroom: config: " + dir_.string() + ": a directory, not a file\n");
  // Without FILE: the file commands read, and the environment.
  EXPECT_EQ(Run({"config", "check"}).status, 0);
  EXPECT_EQ(Run({"config", "check"}, {"HEADROOM_PLATFORM=tpu"}).status, 2);
}

TEST_F(ConfigCli, ExampleFileIsValid) {
  const std::string example = testing::SourcePath("share/config/config.toml.example");
  const auto r = Run({"config", "check", example});
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST_F(ConfigCli, PlanBudgetMovesWithReserve) {
  const uint64_t available = testing::FixtureMeminfoBytes("gb10-idle", "MemAvailable");
  ASSERT_GT(available, 0u);
  const std::vector<std::string> plan = {"plan", "llama-3.1-8b", "--root", kFixtures + "gb10-idle",
                                         "--json"};
  auto budget = [&](const std::vector<std::string>& extra_args,
                    const std::vector<std::string>& env) {
    std::vector<std::string> args = plan;
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    const auto r = Run(args, env);
    EXPECT_LE(r.status, 1) << r.err;
    const auto j = nlohmann::json::parse(r.out, nullptr, false);
    return j.is_object() ? j["budget_bytes"].get<uint64_t>() : 0;
  };
  // The budget is MemAvailable minus the reserve and the guard's kill level (8 % of the
  // fixture's MemTotal), docs/config.md "The levels".
  const uint64_t kill = 127600748ULL * 1024 * 8 / 100;
  EXPECT_EQ(budget({}, {}), available - (4ULL << 30) - kill);
  WriteConfig("[plan]\nreserve = \"6GiB\"\n");
  EXPECT_EQ(budget({}, {}), available - (6ULL << 30) - kill);
  EXPECT_EQ(budget({}, {"HEADROOM_RESERVE=5GB"}), available - 5'000'000'000ULL - kill);
  EXPECT_EQ(budget({"--reserve", "7GiB"}, {"HEADROOM_RESERVE=5GB"}),
            available - (7ULL << 30) - kill);
  // The kill level from the file moves it too.
  WriteConfig("[plan]\nreserve = \"6GiB\"\n[guard]\nkill_level = \"5GiB\"\n");
  EXPECT_EQ(budget({}, {}), available - (6ULL << 30) - (5ULL << 30));
  // --budget replaces the reserve altogether; a configured reserve is no conflict.
  EXPECT_EQ(budget({"--budget", "50GiB"}, {}), 50ULL << 30);
}

TEST_F(ConfigCli, GuardKillLevelFromTheFile) {
  // A fixture root: the guard reads its (static) MemAvailable, far above the level, and
  // the job (true) ends at once.
  const std::vector<std::string> guard = {"guard",       "--root",       FixtureCopy("gb10-idle"),
                                          "--no-cgroup", "--no-journal", "--json",
                                          "--",          "true"};
  const uint64_t total = testing::FixtureMeminfoBytes("gb10-idle", "MemTotal");
  auto levels = [&](const std::vector<std::string>& env) {
    const auto r = Run(guard, env);
    EXPECT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out, nullptr, false);
    return j.is_object() ? std::pair<uint64_t, uint64_t>{j["kill_below_bytes"].get<uint64_t>(),
                                                         j["warn_below_bytes"].get<uint64_t>()}
                         : std::pair<uint64_t, uint64_t>{0, 0};
  };
  const auto defaults = levels({});
  EXPECT_EQ(defaults.first, std::max<uint64_t>(4ULL << 30, total * 8 / 100));
  EXPECT_EQ(defaults.second, 2 * defaults.first);
  WriteConfig("[guard]\nkill_level = \"10GiB\"\n");
  using Levels = std::pair<uint64_t, uint64_t>;
  EXPECT_EQ(levels({}), (Levels{10ULL << 30, 20ULL << 30}));
  WriteConfig("[guard]\nkill_level = \"5%\"\nwarn_level = \"30GiB\"\n");
  EXPECT_EQ(levels({}),
            (Levels{static_cast<uint64_t>(0.05 * static_cast<double>(total)), 30ULL << 30}));
  // The flag wins.
  std::vector<std::string> with_flag = guard;
  with_flag.insert(with_flag.begin() + 1, {"--min-available", "9GiB"});
  const auto r = Run(with_flag);
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.err;
  EXPECT_EQ(j["kill_below_bytes"], 9ULL << 30);
  EXPECT_EQ(j["warn_below_bytes"], 30ULL << 30);
}

TEST_F(ConfigCli, WatchIntervalFromTheFile) {
  WriteConfig("[watch]\ninterval = \"250ms\"\n");
  const std::string csv = (dir_ / "samples.csv").string();
  const auto r = Run({"watch", "--root", FixtureCopy("gb10-idle"), "--out", csv, "--no-journal",
                      "--", "sleep", "0.3"});
  EXPECT_EQ(r.status, 0) << r.err;
  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  EXPECT_NE(header.find("interval_ms=250 "), std::string::npos) << header;
}

// top: [top] interval and [platform] kind from the file; the flag still wins.
TEST_F(ConfigCli, TopTakesItsIntervalAndPlatformFromTheFile) {
  WriteConfig("[top]\ninterval = \"2500ms\"\n[platform]\nkind = \"gb10\"\n");
  const std::vector<std::string> top = {"top", "--json", "--root", FixtureCopy("ps-box")};
  const auto r = Run(top);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j["interval_ms"], 2500);
  EXPECT_EQ(j["platform"]["kind"], "gb10");
  EXPECT_EQ(j["platform"]["sustained_power_mw"], 100000);
  std::vector<std::string> with_flag = top;
  with_flag.insert(with_flag.end(), {"--interval", "300ms"});
  const auto f = nlohmann::json::parse(Run(with_flag).out, nullptr, false);
  ASSERT_TRUE(f.is_object());
  EXPECT_EQ(f["interval_ms"], 300);
  // And from the environment over the file.
  const auto e =
      nlohmann::json::parse(Run(top, {"HEADROOM_TOP_INTERVAL=700ms"}).out, nullptr, false);
  ASSERT_TRUE(e.is_object());
  EXPECT_EQ(e["interval_ms"], 700);
}

TEST_F(ConfigCli, HistoryReadsTheConfiguredJournal) {
  WriteConfig("journal = \"~/jr/my.db\"\n");
  auto r = Run({"history", "--json"});
  EXPECT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_EQ(j["journal"], (dir_ / "jr" / "my.db").string());
  // HEADROOM_JOURNAL wins over the file, --journal over both.
  r = Run({"history", "--json"}, {"HEADROOM_JOURNAL=" + (dir_ / "env.db").string()});
  j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_EQ(j["journal"], (dir_ / "env.db").string());
  r = Run({"history", "--json", "--journal", (dir_ / "flag.db").string()},
          {"HEADROOM_JOURNAL=" + (dir_ / "env.db").string()});
  j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_EQ(j["journal"], (dir_ / "flag.db").string());
}

TEST_F(ConfigCli, GuardRecordsInTheConfiguredJournal) {
  WriteConfig("journal = \"~/jr/guard.db\"\n");
  const auto g = Run({"guard", "--root", FixtureCopy("gb10-idle"), "--no-cgroup", "--", "true"});
  EXPECT_EQ(g.status, 0) << g.err;
  EXPECT_TRUE(fs::exists(dir_ / "jr" / "guard.db"));
  const auto h = Run({"history", "--json"});
  const auto j = nlohmann::json::parse(h.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << h.out;
  EXPECT_EQ(j["runs"].size(), 1u);
}

// Issue 31: --root is read-only, yet the guard wrote its PSI trigger into the tree's
// proc/pressure/memory (a fixture in the repository was changed this way).
TEST_F(ConfigCli, GuardAndWatchUnderRootWriteNothingBelowIt) {
  const std::string root = FixtureCopy("gb10-idle");
  const fs::path pressure = fs::path(root) / "proc" / "pressure" / "memory";
  ASSERT_TRUE(fs::exists(pressure));
  const std::string before = testing::Slurp(pressure);
  const auto g = Run({"guard", "--root", root, "--no-cgroup", "--no-journal", "--", "true"});
  EXPECT_EQ(g.status, 0) << g.err;
  EXPECT_EQ(testing::Slurp(pressure), before);
  EXPECT_FALSE(fs::exists(fs::path(root) / "proc" / "self" / "oom_score_adj"));
  const auto w = Run({"watch", "--root", root, "--no-journal", "--guard", "--out",
                      (dir_ / "samples.csv").string(), "--", "true"});
  EXPECT_EQ(w.status, 0) << w.err;
  EXPECT_EQ(testing::Slurp(pressure), before);
}

TEST_F(ConfigCli, ExplainAssumesTheConfiguredPlatform) {
  const auto run = testing::MakeSyntheticRun(testing::Scenario::kClockCollapse, 300, 120, 200, 3.0);
  const std::string log = Write("train.log", run.log),
                    samples = Write("samples.csv", run.samples_csv);
  auto r = Run({"explain", "--log", log, "--samples", samples});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("platform gb10 (from header)"), std::string::npos) << r.out;
  WriteConfig("[platform]\nkind = \"none\"\n");
  r = Run({"explain", "--log", log, "--samples", samples});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("platform none (from config)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unavailable: GPU: platform none"), std::string::npos) << r.out;
  r = Run({"explain", "--log", log, "--samples", samples, "--json"});
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j["samples"]["platform"], "none");
  EXPECT_EQ(j["samples"]["platform_source"], "config");
  // --platform wins.
  r = Run({"explain", "--log", log, "--samples", samples, "--platform", "gb10"});
  EXPECT_NE(r.out.find("platform gb10 (from flag)"), std::string::npos) << r.out;
}

TEST_F(ConfigCli, ReportUsesTheConfiguredPowerFigures) {
  const auto run = testing::MakeSyntheticRun(testing::Scenario::kThermalPlateau);
  const std::string samples = Write("samples.csv", run.samples_csv);
  auto power = [&]() {
    const auto r = Run({"report", "--samples", samples, "--json"});
    EXPECT_EQ(r.status, 0) << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  };
  const auto before = power();
  ASSERT_TRUE(before.is_object());
  EXPECT_EQ(before["platform"]["name"], "gb10");
  EXPECT_EQ(before["platform"]["sustained_power_w"], 100.0);  // GB10's own figures
  EXPECT_EQ(before["platform"]["rated_power_w"], 240.0);
  WriteConfig("[platform]\nsustained_power_w = 90\nrated_power_w = 200.5\n");
  const auto after = power();
  ASSERT_TRUE(after.is_object());
  EXPECT_EQ(after["platform"]["sustained_power_w"], 90.0);
  EXPECT_EQ(after["platform"]["rated_power_w"], 200.5);
  WriteConfig("[platform]\nkind = \"none\"\nsustained_power_w = 90\n");
  EXPECT_EQ(power()["platform"]["name"], "none");
}

TEST_F(ConfigCli, PsKeepsTheConfiguredKillLevelFree) {
  WriteConfig("[guard]\nkill_level = \"20GiB\"\n");
  const auto r = Run({"ps", "--root", kFixtures + "ps-box", "--json", "--need", "4GiB"});
  EXPECT_LE(r.status, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j["need"]["reserve_bytes"], 20ULL << 30);
  EXPECT_EQ(j["need"]["budget_bytes"], j["mem_total_bytes"].get<uint64_t>() - (20ULL << 30));
}

TEST_F(ConfigCli, ExportIntervalFromTheEnvironment) {
  // Killed at the timeout (export runs until a signal); its start line is what counts.
  const auto r =
      Run({"export", "--listen", "127.0.0.1:0", "--no-journal", "--root", FixtureCopy("gb10-idle")},
          {"HEADROOM_EXPORT_INTERVAL=2s"}, 1500);
  EXPECT_NE(r.err.find("sampling every 2s"), std::string::npos) << r.err;
}

TEST_F(ConfigCli, ShowSpeaksChineseButJsonStaysEnglish) {
  const auto r = Run({"config", "show"}, {"LC_ALL=zh_TW.UTF-8", "LANGUAGE=zh_TW"});
  EXPECT_EQ(r.status, 0) << r.err;
  if (r.out.find("設定檔") == std::string::npos) GTEST_SKIP() << "no zh_TW locale or catalog here";
  EXPECT_NE(r.out.find("預設"), std::string::npos);
  const auto j = Run({"config", "show", "--json"}, {"LC_ALL=zh_TW.UTF-8", "LANGUAGE=zh_TW"});
  EXPECT_EQ(j.out.find("預設"), std::string::npos);
  EXPECT_NE(j.out.find("\"origin\": \"default\""), std::string::npos);
}

TEST_F(ConfigCli, BadFlagsOfShow) {
  const auto r = Run({"config", "show", "--reserve", "lots"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(
      r.err,
      "headroom: config: --reserve: 'lots' is not a size (examples: 16G, 16GiB, 100GB, 1.5T)\n");
  EXPECT_EQ(Run({"config", "frobnicate"}).status, 2);
}

}  // namespace
}  // namespace headroom
