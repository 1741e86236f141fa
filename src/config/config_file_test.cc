// Locating and reading config.toml: the file's place from the environment, and what may
// stand where the file should be (nothing, a directory, a FIFO, a huge file).
#include "config/config_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "base/bytes.h"
#include "config/config_toml.h"
#include "testing_env.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;

class ConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("headroom-config-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  fs::path dir_;
};

TEST(ConfigLocate, ExplicitThenXdgThenHome) {
  auto l = LocateConfigFile(testing::FakeEnv(
      {{"HEADROOM_CONFIG", "/x/c.toml"}, {"XDG_CONFIG_HOME", "/xdg"}, {"HOME", "/h"}}));
  EXPECT_EQ(l.path, "/x/c.toml");
  EXPECT_TRUE(l.explicit_path);
  EXPECT_EQ(l.named_by, "HEADROOM_CONFIG");
  l = LocateConfigFile(testing::FakeEnv({{"XDG_CONFIG_HOME", "/xdg"}, {"HOME", "/h"}}));
  EXPECT_EQ(l.path, "/xdg/headroom/config.toml");
  EXPECT_FALSE(l.explicit_path);
  EXPECT_EQ(l.named_by, "XDG_CONFIG_HOME");
  // Relative XDG values are ignored, as the XDG spec says; empty ones are unset.
  l = LocateConfigFile(
      testing::FakeEnv({{"XDG_CONFIG_HOME", "rel"}, {"HEADROOM_CONFIG", ""}, {"HOME", "/h"}}));
  EXPECT_EQ(l.path, "/h/.config/headroom/config.toml");
  EXPECT_EQ(l.named_by, "HOME");
  l = LocateConfigFile(testing::FakeEnv({}));
  EXPECT_EQ(l.path, "");
}

TEST_F(ConfigFileTest, MissingIsNoFile) {
  auto r = ReadConfigFile((dir_ / "nope.toml").string());
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(*r);
  // A path through a regular file (ENOTDIR) is missing too.
  const std::string file = Write("f", "");
  r = ReadConfigFile(file + "/config.toml");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(*r);
}

TEST_F(ConfigFileTest, ReadsAndParses) {
  const std::string p = Write("config.toml", "[plan]\nreserve = \"2GiB\"\n");
  auto r = ReadConfigFile(p);
  ASSERT_TRUE(r.ok()) << EnglishText(r.error().what);
  ASSERT_TRUE(*r);
  ASSERT_EQ((*r)->settings.size(), 1u);
  EXPECT_EQ((*r)->path, p);
}

TEST_F(ConfigFileTest, DirectoryFifoAndHugeFilesAreRefusedWithoutHanging) {
  auto r = ReadConfigFile(dir_.string());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(EnglishText(r.error().what), dir_.string() + ": a directory, not a file");
  const std::string fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  r = ReadConfigFile(fifo);  // a blocking open would hang here: no writer
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(EnglishText(r.error().what), fifo + ": not a regular file (a FIFO, socket or device)");
  r = ReadConfigFile("/dev/zero");
  ASSERT_FALSE(r.ok());
  const std::string big = Write("big.toml", std::string(kMaxConfigFileBytes + 1, '#'));
  r = ReadConfigFile(big);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(EnglishText(r.error().what).find("larger than 65536 bytes"), std::string::npos);
}

TEST_F(ConfigFileTest, UnreadableFileIsAnError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads a mode-000 file";
  const std::string p = Write("config.toml", "");
  ::chmod(p.c_str(), 0);
  auto r = ReadConfigFile(p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(EnglishText(r.error().what).find("Permission denied"), std::string::npos)
      << EnglishText(r.error().what);
}

TEST_F(ConfigFileTest, UnsearchableDirectoryIsMissingOnlyWhereAsked) {
  if (::geteuid() == 0) GTEST_SKIP() << "root searches a mode-000 directory";
  const std::string p = Write("locked/headroom/config.toml", "[plan]\nreserve = \"2GiB\"\n");
  ::chmod((dir_ / "locked").c_str(), 0);
  struct Unlock {
    fs::path dir;
    ~Unlock() { ::chmod(dir.c_str(), 0700); }  // so TearDown can remove it, failed or not
  } unlock{dir_ / "locked"};
  auto r = ReadConfigFile(p, /*unsearchable_is_missing=*/true);
  EXPECT_TRUE(r.ok() && !*r);
  r = ReadConfigFile(p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(EnglishText(r.error().what).find("Permission denied"), std::string::npos)
      << EnglishText(r.error().what);
  // The default location behind it: no file, no error; named by HEADROOM_CONFIG: an error.
  EXPECT_TRUE(LoadConfig(testing::FakeEnv({{"XDG_CONFIG_HOME", (dir_ / "locked").string()}}))
                  .errors.empty());
  EXPECT_EQ(LoadConfig(testing::FakeEnv({{"HEADROOM_CONFIG", p}})).errors.size(), 1u);
}

TEST_F(ConfigFileTest, LoadLayersTheFileAndTheEnvironment) {
  Write("xdg/headroom/config.toml", "[plan]\nreserve = \"2GiB\"\n[watch]\ninterval = \"5s\"\n");
  const LoadedConfig c = LoadConfig(testing::FakeEnv({{"XDG_CONFIG_HOME", (dir_ / "xdg").string()},
                                                      {"HOME", "/h"},
                                                      {"HEADROOM_WATCH_INTERVAL", "7s"}}));
  EXPECT_TRUE(c.errors.empty());
  EXPECT_TRUE(c.exists);
  EXPECT_EQ(c.settings.reserve_bytes.value, 2 * kGiB);
  EXPECT_EQ(c.settings.reserve_bytes.where, (dir_ / "xdg/headroom/config.toml").string() + ":2");
  EXPECT_EQ(c.settings.watch_interval.value, std::chrono::seconds(7));
  EXPECT_EQ(c.settings.journal.value, "/h/.local/state/headroom/journal.db");
}

TEST_F(ConfigFileTest, MissingDefaultFileIsFineMissingExplicitFileIsNot) {
  LoadedConfig c = LoadConfig(testing::FakeEnv({{"HOME", dir_.string()}}));
  EXPECT_TRUE(c.errors.empty());
  EXPECT_FALSE(c.exists);
  const std::string named = (dir_ / "named.toml").string();
  c = LoadConfig(testing::FakeEnv({{"HOME", dir_.string()}, {"HEADROOM_CONFIG", named}}));
  ASSERT_EQ(c.errors.size(), 1u);
  EXPECT_EQ(EnglishText(c.errors[0]),
            "config: " + named + ": no such file (named by HEADROOM_CONFIG)");
}

TEST_F(ConfigFileTest, BrokenFileKeepsDefaultsAndStillReadsTheEnvironment) {
  const std::string p =
      Write("c.toml", "[plan]\nreserve = \"2GiB\"\n[guard]\nkill_level = \"oops\"\n");
  const LoadedConfig c =
      LoadConfig(testing::FakeEnv({{"HEADROOM_CONFIG", p}, {"HEADROOM_RESERVE", "bad"}}));
  ASSERT_EQ(c.errors.size(), 2u);
  EXPECT_EQ(EnglishText(c.errors[0]),
            "config: " + p +
                ":4: guard.kill_level: 'oops' is not a size (examples: 16G, 16GiB, 100GB, 1.5T)");
  EXPECT_EQ(EnglishText(c.errors[1]).rfind("config: HEADROOM_RESERVE: ", 0), 0u);
  // None of the broken file is used, not even its good line.
  EXPECT_EQ(c.settings.reserve_bytes.origin, SettingOrigin::kDefault);
}

}  // namespace
}  // namespace headroom
