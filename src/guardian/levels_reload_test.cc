#include "guardian/levels_reload.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <string>

#include "testing_files.h"

namespace headroom {
namespace {

// A stand-in for `headroom guardian ... --print-levels`: a real program (sh) that writes what
// the test says, so the spawn, the pipe, the deadline and the exit status are the real ones.
std::string Script(const testing::TempDir& dir, const std::string& body) {
  const std::string path = dir.File("print-levels");
  testing::WriteFile(path, "#!/bin/sh\n" + body + "\n");
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST(ReadReloadedLevels, TheProgramsLevelsWithItsWordsAndTheFlag) {
  testing::TempDir dir("levels-reload");
  // It sees its words and --print-levels last, as `headroom guardian` would.
  const std::string p = Script(dir,
                               "[ \"$1 $2 $3\" = \"guardian --min-available 1GiB\" ] && "
                               "[ \"$4\" = --print-levels ] && echo 'levels 1073741824 2147483648 "
                               "250' || { echo \"headroom: bad words: $*\" >&2; exit 2; }");
  auto l = ReadReloadedLevels(p, {"guardian", "--min-available", "1GiB"}, std::chrono::seconds(5));
  ASSERT_TRUE(l) << EnglishText(l.error().what);
  EXPECT_EQ(l->min_available_bytes, 1073741824u);
  EXPECT_EQ(l->warn_available_bytes, 2147483648u);
  EXPECT_EQ(l->grace, std::chrono::milliseconds(250));
}

TEST(ReadReloadedLevels, ARefusalGivesTheProgramsOwnLine) {
  testing::TempDir dir("levels-reload");
  const std::string p =
      Script(dir, "echo 'headroom: config.toml:3: kill_level: not a size' >&2; exit 2");
  auto l = ReadReloadedLevels(p, {"guardian"}, std::chrono::seconds(5));
  ASSERT_FALSE(l);
  EXPECT_EQ(EnglishText(l.error().what), "config.toml:3: kill_level: not a size");
}

TEST(ReadReloadedLevels, AProgramThatHangsIsKilledAtTheDeadline) {
  testing::TempDir dir("levels-reload");
  const std::string p = Script(dir, "exec sleep 30");
  const auto t0 = std::chrono::steady_clock::now();
  auto l = ReadReloadedLevels(p, {"guardian"}, std::chrono::milliseconds(300));
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(l);
  EXPECT_NE(EnglishText(l.error().what).find("did not answer within 300 ms"), std::string::npos);
  EXPECT_LT(took, std::chrono::seconds(10));  // killed, not waited out
}

TEST(ReadReloadedLevels, GarbageAndAMissingProgramAreErrorsNotCrashes) {
  testing::TempDir dir("levels-reload");
  auto garbage = ReadReloadedLevels(Script(dir, "head -c 100000 /dev/zero"), {"guardian"},
                                    std::chrono::seconds(5));
  ASSERT_FALSE(garbage);
  auto missing =
      ReadReloadedLevels(dir.File("nothing-here"), {"guardian"}, std::chrono::seconds(5));
  ASSERT_FALSE(missing);
  EXPECT_NE(EnglishText(missing.error().what).find("nothing-here"), std::string::npos);
}

}  // namespace
}  // namespace headroom
