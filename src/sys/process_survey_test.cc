#include "sys/process_survey.h"

#include <gtest/gtest.h>

#include <string>

#include "testing_files.h"

namespace headroom {
namespace {

using namespace std::string_literals;

TEST(ParseCmdline, NulSeparatedWithFinalNul) {
  const auto argv = ParseCmdline("vllm\0serve\0m\0--gpu-memory-utilization=0.5\0"s);
  ASSERT_EQ(argv.size(), 4u);
  EXPECT_EQ(argv[0], "vllm");
  EXPECT_EQ(argv[3], "--gpu-memory-utilization=0.5");
}

TEST(ParseCmdline, HostileInput) {
  EXPECT_TRUE(ParseCmdline("").empty());  // kernel thread or zombie
  // setproctitle: one argument, no NUL at all.
  const auto title = ParseCmdline("ray::RayWorkerWrapper.execute_method");
  ASSERT_EQ(title.size(), 1u);
  EXPECT_EQ(title[0], "ray::RayWorkerWrapper.execute_method");
  // Empty arguments in the middle are real ones.
  EXPECT_EQ(ParseCmdline("a\0\0b\0"s), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(ParseCmdline("\0"s), (std::vector<std::string>{""}));
  // Bytes that are not UTF-8, newlines and escapes stay as they are (display masks them).
  const auto weird = ParseCmdline("py\xff\n\x1b[31m\0x\0"s);
  ASSERT_EQ(weird.size(), 2u);
  EXPECT_EQ(weird[0], "py\xff\n\x1b[31m");
  // A huge command line: 100k arguments.
  std::string huge;
  for (int i = 0; i < 100000; ++i) huge += "arg\0"s;
  EXPECT_EQ(ParseCmdline(huge).size(), 100000u);
}

TEST(ParseEnviron, FirstWinsAndMalformedSkipped) {
  const auto env = ParseEnviron("A=1\0NOEQUALS\0=novalue\0B=x=y\0A=2\0EMPTY=\0"s);
  EXPECT_EQ(env.size(), 3u);
  EXPECT_EQ(env.at("A"), "1");
  EXPECT_EQ(env.at("B"), "x=y");
  EXPECT_EQ(env.at("EMPTY"), "");
  EXPECT_TRUE(ParseEnviron("").empty());
  EXPECT_EQ(ParseEnviron("OLLAMA_NUM_PARALLEL=4").at("OLLAMA_NUM_PARALLEL"), "4");  // no final NUL
}

TEST(ParseSmapsRollup, PssByKeyNotPssAnon) {
  const std::string rollup =
      "aaaad0000000-ffffd8a5f000 ---p 00000000 00:00 0                          [rollup]\n"
      "Rss:             2097152 kB\n"
      "Pss_Anon:          11111 kB\n"
      "Pss:             1572864 kB\n"
      "Pss_File:              0 kB\n";
  EXPECT_EQ(ParseSmapsRollupPssBytes(rollup), 1572864ULL * 1024);
  EXPECT_FALSE(ParseSmapsRollupPssBytes("Pss_Anon: 5 kB\n"));
  EXPECT_FALSE(ParseSmapsRollupPssBytes("Pss: 12x kB\n"));
  EXPECT_FALSE(ParseSmapsRollupPssBytes("Pss: 99999999999999999999999 kB\n"));
  EXPECT_FALSE(ParseSmapsRollupPssBytes("Pss: 12\n"));  // no unit
  EXPECT_FALSE(ParseSmapsRollupPssBytes(""));
}

TEST(MapsHasTorch, LibtorchSharedObjectOnly) {
  EXPECT_TRUE(MapsHasTorch(
      "7f1c00000000-7f1c10000000 r-xp 00000000 103:02 5678 /venv/lib/python3.12/site-packages/"
      "torch/lib/libtorch_cuda.so\n"));
  EXPECT_TRUE(MapsHasTorch("7f-7f r-xp 0 0:0 1 /opt/libtorch.so (deleted)\n"));
  EXPECT_FALSE(MapsHasTorch("7f-7f r-xp 0 0:0 1 /home/a/libtorch/notes.txt\n"));
  EXPECT_FALSE(MapsHasTorch("7f-7f r-xp 0 0:0 1 /usr/lib/libc.so.6\n"));
  EXPECT_FALSE(MapsHasTorch(""));
}

TEST(ParseStatusUid, RealUid) {
  EXPECT_EQ(ParseStatusUid("Name:\tx\nUid:\t1000\t1000\t1000\t1000\nGid:\t5\n"), 1000u);
  EXPECT_FALSE(ParseStatusUid("Name:\tx\n"));
  EXPECT_FALSE(ParseStatusUid("Uid:\tabc\n"));
}

TEST(ParsePasswd, NamesByUid) {
  const auto names =
      ParsePasswdNames("root:x:0:0::/root:/bin/sh\nbroken\n:x:5:5\nollama:x:998:998::/:/bin/false");
  EXPECT_EQ(names.size(), 2u);
  EXPECT_EQ(names.at(0), "root");
  EXPECT_EQ(names.at(998), "ollama");
}

TEST(ParseCgroup, UnifiedLine) {
  EXPECT_EQ(ParseCgroupV2Path("12:memory:/x\n0::/system.slice/ollama.service\n"),
            "/system.slice/ollama.service");
  EXPECT_FALSE(ParseCgroupV2Path("12:memory:/x\n"));
}

TEST(ReadProcessFacts, FixtureAndMissingFiles) {
  const SysRoot root(testing::FixturePath("ps-box"));
  auto facts = ReadProcessBasics(root, 2222);
  ASSERT_TRUE(facts);
  EXPECT_EQ(facts->comm, "python3");
  EXPECT_EQ(facts->ppid, 1);
  EXPECT_EQ(facts->argv, (std::vector<std::string>{"python3", "train.py", "--lr", "1e-4"}));
  ReadProcessDetails(root, *facts);
  EXPECT_EQ(facts->uid, 1000u);
  EXPECT_EQ(facts->rss_bytes, 6ULL << 30);
  EXPECT_EQ(facts->pss_bytes, 6ULL << 30);
  EXPECT_FALSE(facts->environ);  // no environ file: unreadable, not empty
  EXPECT_TRUE(ReadMapsHasTorch(root, 2222));
  EXPECT_FALSE(ReadMapsHasTorch(root, 6666));
  EXPECT_FALSE(ReadProcessBasics(root, 999999));
}

TEST(ReadFilePrefix, TruncatesInsteadOfFailing) {
  const SysRoot root(testing::FixturePath("ps-box"));
  auto p = ReadFilePrefix(root, "proc/1111/cmdline", 10);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->truncated);
  EXPECT_EQ(p->text, "/home/alic");
  EXPECT_FALSE(ReadFilePrefix(root, "proc/1111/nonexistent", 10));
}

}  // namespace
}  // namespace headroom
