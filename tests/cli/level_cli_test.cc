// Levels a user cannot mistype (docs/guard.md "Levels"): the real binary, every place that
// takes a level of the pool, each refusal one line with the usage status and before the job
// (a child that would `touch` a marker) ever runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "run_cli.h"
#include "testing_files.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using testing::RunCli;
using testing::TempDir;

// tests/fixtures/gb10-idle/proc/meminfo: MemTotal 127600748 kB.
constexpr const char* kSpark = "tests/fixtures/gb10-idle";
constexpr uint64_t kSparkTotalBytes = 127600748ULL * 1024;

struct Refusal {
  const char* name;
  std::vector<std::string> args;      // after the marker is known: "MARKER" stands for it
  std::string says;                   // in the one line on stderr
  std::vector<std::string> env = {};  // HEADROOM_CONFIG=... and the like
};

class LevelCli : public ::testing::Test {
 protected:
  TempDir dir_{"levels"};
  std::string marker_ = dir_.File("job-ran");
  std::string config_ = dir_.File("config.toml");

  void Expect(const Refusal& r) {
    std::vector<std::string> args;
    for (const auto& a : r.args) args.push_back(a == "MARKER" ? marker_ : a);
    std::vector<std::string> env = {"HEADROOM_JOURNAL=" + dir_.File("journal.db")};
    env.insert(env.end(), r.env.begin(), r.env.end());
    const auto res = RunCli(args, 20000, env);
    EXPECT_EQ(res.status, 2) << r.name << ": " << res.err;
    // One line (beside, from watch on a machine without NVIDIA's library, the sampler's note
    // that it cannot load it).
    std::string lines = res.err;
    if (lines.starts_with("headroom: nvml: ")) lines.erase(0, lines.find('\n') + 1);
    EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 1) << r.name << ": " << res.err;
    EXPECT_NE(res.err.find(r.says), std::string::npos) << r.name << ": " << res.err;
    EXPECT_FALSE(fs::exists(marker_)) << r.name << ": the job ran";
  }
  void Config(const std::string& text) { testing::WriteFile(config_, text); }
};

constexpr const char* kNoUnit =
    "has no unit: a level needs one (8GiB, 512MiB, 100GB) or a "
    "percentage of MemTotal (8%)";

// `guard --min-available 10` was 10 bytes, a level that never fires.
TEST_F(LevelCli, ABareNumberIsRefusedByEveryLevelFlag) {
  const Refusal rows[] = {
      {"guard --min-available 10",
       {"guard", "--no-journal", "--min-available", "10", "--", "touch", "MARKER"},
       std::string("headroom: guard: --min-available: '10' ") + kNoUnit},
      {"guard --warn-available 20",
       {"guard", "--no-journal", "--min-available", "4GiB", "--warn-available", "20", "--", "touch",
        "MARKER"},
       std::string("--warn-available: '20' ") + kNoUnit},
      {"guard --require-available 1e9",
       {"guard", "--no-journal", "--require-available", "1e9", "--", "touch", "MARKER"},
       std::string("--require-available: '1e9' ") + kNoUnit},
      {"sweep --min-available 10",
       {"sweep", "--batch", "1..2", "--min-available", "10", "--", "sh", "-c",
        "touch \"$0\" # {batch}", "MARKER"},
       std::string("headroom: sweep: --min-available: '10' ") + kNoUnit},
      {"sweep --limit 4096",
       {"sweep", "--batch", "1..2", "--limit", "4096", "--", "sh", "-c", "touch \"$0\" # {batch}",
        "MARKER"},
       std::string("--limit: '4096' ") + kNoUnit},
      {"sweep --require-available 10",
       {"sweep", "--batch", "1..2", "--require-available", "10", "--", "sh", "-c",
        "touch \"$0\" # {batch}", "MARKER"},
       std::string("--require-available: '10' ") + kNoUnit},
      {"ps --need 10", {"ps", "--root", kSpark, "--need", "10"}, "--need: '10' has no unit"},
  };
  for (const auto& row : rows) Expect(row);
}

// `guard --min-available 100TiB` killed the job at once with 99.
TEST_F(LevelCli, ALevelAtOrAboveMemTotalIsRefused) {
  const std::string at_total = std::to_string(kSparkTotalBytes) + "B";
  const Refusal rows[] = {
      {"guard --min-available 100TiB",
       {"guard", "--no-journal", "--min-available", "100TiB", "--", "touch", "MARKER"},
       "headroom: guard: --min-available: '100TiB' (102400.00 GiB) is not below MemTotal ("},
      {"guard --min-available MemTotal",
       {"guard", "--no-journal", "--root", kSpark, "--min-available", at_total, "--", "touch",
        "MARKER"},
       "--min-available: '" + at_total + "' (121.69 GiB) is not below MemTotal (121.69 GiB)"},
      {"guard --warn-available above MemTotal",
       {"guard", "--no-journal", "--root", kSpark, "--min-available", "8GiB", "--warn-available",
        "122GiB", "--", "touch", "MARKER"},
       "--warn-available: '122GiB' (122.00 GiB) is not below MemTotal (121.69 GiB)"},
      {"sweep --min-available 100TiB",
       {"sweep", "--batch", "1..2", "--min-available", "100TiB", "--", "sh", "-c",
        "touch \"$0\" # {batch}", "MARKER"},
       "headroom: sweep: --min-available: '100TiB' (102400.00 GiB) is not below MemTotal"},
  };
  for (const auto& row : rows) Expect(row);
}

TEST_F(LevelCli, AWarningAtOrBelowTheKillLevelIsRefused) {
  const Refusal rows[] = {
      {"guard --warn-available below a percentage kill level",
       {"guard", "--no-journal", "--root", kSpark, "--min-available", "10%", "--warn-available",
        "12GiB", "--", "touch", "MARKER"},
       "--warn-available: 12.88 GB (12.00 GiB) is not above the kill level"},
  };
  for (const auto& row : rows) Expect(row);
}

// config.toml and HEADROOM_*: the same rules, the error naming the file and key (or the
// variable), for guard and for `watch --guard`, which takes its levels from there alone.
TEST_F(LevelCli, ConfiguredLevelsFollowTheSameRules) {
  Config("schema_version = 1\n[guard]\nkill_level = \"10\"\n");
  Expect({"config kill_level = \"10\"",
          {"guard", "--no-journal", "--", "touch", "MARKER"},
          "headroom: config: " + config_ + ":3: guard.kill_level: '10' has no unit",
          {"HEADROOM_CONFIG=" + config_}});
  Config("schema_version = 1\n[guard]\nkill_level = \"100TiB\"\n");
  for (const char* cmd : {"guard", "watch"}) {
    std::vector<std::string> args = {cmd, "--no-journal"};
    if (std::string(cmd) == "watch") args.insert(args.end(), {"--guard", "--out", dir_.File("s")});
    args.insert(args.end(), {"--", "touch", "MARKER"});
    Expect({cmd,
            args,
            std::string("headroom: ") + cmd + ": config: " + config_ +
                ":3: guard.kill_level: '100TiB' (102400.00 GiB) is not below MemTotal",
            {"HEADROOM_CONFIG=" + config_}});
  }
  Config("schema_version = 1\n[guard]\nkill_level = \"8GiB\"\nwarn_level = \"6GiB\"\n");
  Expect({"config warn_level below kill_level",
          {"guard", "--no-journal", "--", "touch", "MARKER"},
          "config: " + config_ +
              ":4: guard.warn_level: 6.44 GB (6.00 GiB) is not above the kill level, 8.59 GB "
              "(8.00 GiB)",
          {"HEADROOM_CONFIG=" + config_}});
  Expect({"HEADROOM_KILL_LEVEL=4096",
          {"guard", "--no-journal", "--", "touch", "MARKER"},
          "config: HEADROOM_KILL_LEVEL: '4096' has no unit",
          {"HEADROOM_KILL_LEVEL=4096"}});
}

// What the unit rule still takes, end to end: the job runs.
TEST_F(LevelCli, LevelsWithUnitsAndPercentagesRun) {
  for (const char* level : {"64MiB", "64M", "67MB", "0.1%", "65536KiB"}) {
    const auto r =
        RunCli({"guard", "--no-journal", "--min-available", level, "--", "touch", marker_}, 20000);
    EXPECT_EQ(r.status, 0) << level << ": " << r.err;
    EXPECT_TRUE(fs::exists(marker_)) << level;
    fs::remove(marker_);
  }
}

}  // namespace
}  // namespace headroom
