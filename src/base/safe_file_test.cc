#include "base/safe_file.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "base/message.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::TempDir;
using testing::WriteFile;

std::string ReadBack(const std::filesystem::path& p) {
  auto r = ReadInputFile(p.string(), 1 << 20);
  return r ? *r : "<unreadable>";
}

TEST(SafeFile, OpenInputRefusesAFifoWithoutWaiting) {
  TempDir dir("safe-file");
  ASSERT_EQ(::mkfifo(dir.File("f").c_str(), 0600), 0);
  auto r = OpenInput(dir.File("f"));
  ASSERT_FALSE(r);
  EXPECT_EQ(EnglishText(r.error().what), dir.File("f") + ": a FIFO, not a regular file");
}

TEST(SafeFile, OpenInputRefusesDirectoriesDevicesAndSockets) {
  TempDir dir("safe-file");
  auto dir_open = OpenInput(dir.path().string());
  ASSERT_FALSE(dir_open);
  EXPECT_NE(EnglishText(dir_open.error().what).find("a directory, not a regular file"),
            std::string::npos);
  auto dev = OpenInput("/dev/null");
  ASSERT_FALSE(dev);
  EXPECT_NE(EnglishText(dev.error().what).find("a character device"), std::string::npos);
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string sock = dir.File("s");
  ASSERT_LT(sock.size(), sizeof addr.sun_path);
  sock.copy(addr.sun_path, sock.size());
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  auto sk = OpenInput(sock);
  ::close(s);
  ASSERT_FALSE(sk);  // open(2) of a socket fails ENXIO: an error, not a hang
}

TEST(SafeFile, OpenInputNamesASymlinkLoop) {
  TempDir dir("safe-file");
  std::filesystem::create_symlink(dir / "b", dir / "a");
  std::filesystem::create_symlink(dir / "a", dir / "b");
  auto r = OpenInput(dir.File("a"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().errno_value, ELOOP);
  EXPECT_NE(EnglishText(r.error().what).find("open(" + dir.File("a") + ")"), std::string::npos);
}

TEST(SafeFile, ReadInputFileReadsARegularFileAndCapsIt) {
  TempDir dir("safe-file");
  WriteFile(dir / "x", "hello\n");
  EXPECT_EQ(ReadBack(dir / "x"), "hello\n");
  auto capped = ReadInputFile(dir.File("x"), 3);
  ASSERT_FALSE(capped);
  EXPECT_NE(EnglishText(capped.error().what).find("larger than 3 bytes"), std::string::npos);
}

TEST(SafeFile, ReplaceFileWritesAndReplacesARegularFile) {
  TempDir dir("safe-file");
  EXPECT_FALSE(ReplaceFile(dir.File("out"), "one"));
  EXPECT_EQ(ReadBack(dir / "out"), "one");
  EXPECT_FALSE(ReplaceFile(dir.File("out"), "two"));
  EXPECT_EQ(ReadBack(dir / "out"), "two");
  // No temporary file is left beside it.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()),
                          std::filesystem::directory_iterator()),
            1);
}

TEST(SafeFile, ReplaceFileRefusesASymlinkAndLeavesItsTargetAlone) {
  TempDir dir("safe-file");
  WriteFile(dir / "target", "precious");
  std::filesystem::create_symlink(dir / "target", dir / "link");
  auto e = ReplaceFile(dir.File("link"), "oops");
  ASSERT_TRUE(e);
  EXPECT_NE(EnglishText(e->what).find("a symbolic link; an output replaces only a regular file"),
            std::string::npos);
  EXPECT_EQ(ReadBack(dir / "target"), "precious");
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "link"));
}

TEST(SafeFile, ReplaceFileRefusesFifosDirectoriesAndDevices) {
  TempDir dir("safe-file");
  ASSERT_EQ(::mkfifo(dir.File("f").c_str(), 0600), 0);
  std::filesystem::create_directory(dir / "d");
  for (const std::string& p : {dir.File("f"), dir.File("d"), std::string("/dev/null")}) {
    auto e = ReplaceFile(p, "x");
    ASSERT_TRUE(e) << p;
    EXPECT_NE(EnglishText(e->what).find("an output replaces only a regular file or nothing"),
              std::string::npos)
        << p;
  }
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_TRUE(std::filesystem::is_fifo(dir / "f"));
  EXPECT_TRUE(std::filesystem::is_directory(dir / "d"));
}

TEST(SafeFile, ReplaceFileRefusesAnInputByAnyName) {
  TempDir dir("safe-file");
  WriteFile(dir / "in.csv", "data");
  std::filesystem::create_hard_link(dir / "in.csv", dir / "hard");
  const std::vector<std::string> inputs{"", dir.File("in.csv")};
  for (const std::string& out : {dir.File("in.csv"), dir.File("hard"), dir.File("./in.csv")}) {
    auto e = ReplaceFile(out, "page", inputs);
    ASSERT_TRUE(e) << out;
    EXPECT_NE(EnglishText(e->what).find("the same file as the input " + dir.File("in.csv")),
              std::string::npos);
  }
  EXPECT_EQ(ReadBack(dir / "in.csv"), "data");
}

TEST(SafeFile, ReplaceFileSkipsATemporaryNamePlantedAsASymlink) {
  TempDir dir("safe-file");
  WriteFile(dir / "victim", "precious");
  // Every name CreateTemporaryBeside could pick starts with "out.tmp-<pid>-"; plant one at the
  // old fixed name as well: neither is ever written through.
  std::filesystem::create_symlink(dir / "victim", dir / "out.tmp");
  EXPECT_FALSE(ReplaceFile(dir.File("out"), "page"));
  EXPECT_EQ(ReadBack(dir / "out"), "page");
  EXPECT_EQ(ReadBack(dir / "victim"), "precious");
}

TEST(SafeFile, CheckOutputPathNeedsAnExistingDirectory) {
  TempDir dir("safe-file");
  auto e = CheckOutputPath(dir.File("no/such/out"));
  ASSERT_TRUE(e);
  EXPECT_NE(EnglishText(e->what).find("directory " + dir.File("no/such") + " does not exist"),
            std::string::npos);
  EXPECT_FALSE(CheckOutputPath(dir.File("fine")));
  EXPECT_FALSE(CheckOutputPath("relative-name-in-cwd"));
}

TEST(SafeFile, OpenOutputAppendsOrTruncatesARegularFileOnly) {
  TempDir dir("safe-file");
  WriteFile(dir / "log", "old\n");
  {
    auto fd = OpenOutput(dir.File("log"), OutputMode::kAppend);
    ASSERT_TRUE(fd);
    EXPECT_FALSE(WriteAll(fd->get(), "new\n", dir.File("log")));
  }
  EXPECT_EQ(ReadBack(dir / "log"), "old\nnew\n");
  {
    auto fd = OpenOutput(dir.File("log"), OutputMode::kTruncate);
    ASSERT_TRUE(fd);
  }
  EXPECT_EQ(ReadBack(dir / "log"), "");
  WriteFile(dir / "target", "precious");
  std::filesystem::create_symlink(dir / "target", dir / "link");
  ASSERT_EQ(::mkfifo(dir.File("f").c_str(), 0600), 0);
  for (const std::string& p : {dir.File("link"), dir.File("f"), std::string("/dev/null")}) {
    auto fd = OpenOutput(p, OutputMode::kTruncate);
    EXPECT_FALSE(fd) << p;
  }
  EXPECT_EQ(ReadBack(dir / "target"), "precious");
}

TEST(SafeFile, WriteAllReportsAFullDevice) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this machine";
  const int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  auto e = WriteAll(fd, "x", "/dev/full");
  ::close(fd);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->errno_value, ENOSPC);
  EXPECT_NE(EnglishText(e->what).find("write(/dev/full)"), std::string::npos);
}

TEST(SafeFile, CheckDistinctOutputsCatchesOneFileTwice) {
  TempDir dir("safe-file");
  WriteFile(dir / "a", "");
  std::filesystem::create_symlink(dir / "a", dir / "b");
  const std::vector<std::string> same_name{dir.File("x"), "", dir.File("./x")};
  EXPECT_TRUE(CheckDistinctOutputs(same_name));
  const std::vector<std::string> same_file{dir.File("a"), dir.File("b")};
  auto e = CheckDistinctOutputs(same_file);
  ASSERT_TRUE(e);
  EXPECT_EQ(EnglishText(e->what), dir.File("a") + " and " + dir.File("b") +
                                      " are the same file; give each output its own");
  const std::vector<std::string> distinct{dir.File("a"), dir.File("c"), ""};
  EXPECT_FALSE(CheckDistinctOutputs(distinct));
}

TEST(SafeFile, CreatePrivateDirectoriesIs0700WhateverTheUmask) {
  TempDir dir("safe-file");
  std::filesystem::create_directory(dir / "kept");
  std::filesystem::permissions(dir / "kept", std::filesystem::perms(0755));
  for (const mode_t mask : {mode_t{0}, mode_t{0277}}) {
    const mode_t old = ::umask(mask);
    const std::string leaf = dir.File("kept/sweeps-" + std::to_string(mask) + "/7");
    auto e = CreatePrivateDirectories(leaf);
    ::umask(old);
    ASSERT_FALSE(e) << EnglishText(e->what);
    for (const std::string& p : {leaf, std::filesystem::path(leaf).parent_path().string()}) {
      struct stat st {};
      ASSERT_EQ(::stat(p.c_str(), &st), 0) << p;
      EXPECT_EQ(st.st_mode & 07777, 0700u) << p << " under umask " << mask;
    }
  }
  struct stat kept {};
  ASSERT_EQ(::stat(dir.File("kept").c_str(), &kept), 0);
  EXPECT_EQ(kept.st_mode & 07777, 0755u);  // a folder that was there is left as it was
  testing::WriteFile(dir / "file", "");
  EXPECT_TRUE(CreatePrivateDirectories(dir.File("file/sub")));
}

}  // namespace
}  // namespace headroom
