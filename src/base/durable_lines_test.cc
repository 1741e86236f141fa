#include "base/durable_lines.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/message.h"
#include "testing_files.h"

namespace headroom {
namespace {

using std::chrono::milliseconds;
using testing::Slurp;
using testing::TempDir;

TEST(DurableLines, NeverWritesThroughASymlinkOrIntoAFifo) {
  TempDir dir("durable-lines");
  testing::WriteFile(dir / "target", "precious\n");
  std::filesystem::create_symlink(dir / "target", dir / "link");
  auto through_link = DurableLines::Create(dir / "link", milliseconds(0));
  ASSERT_FALSE(through_link);
  EXPECT_NE(EnglishText(through_link.error().what).find("a symbolic link"), std::string::npos);
  EXPECT_EQ(Slurp(dir / "target"), "precious\n");  // not truncated
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  EXPECT_FALSE(DurableLines::Create(dir / "fifo", milliseconds(0)));
}

// A write that fails is kept (first_error) for the caller to report at the end: a file-size
// limit makes write(2) fail EFBIG, as a full disk makes it fail ENOSPC.
TEST(DurableLines, KeepsTheFirstWriteError) {
  TempDir dir("durable-lines");
  auto lines = DurableLines::Create(dir / "out", milliseconds(0));
  ASSERT_TRUE(lines);
  EXPECT_TRUE(lines->Append("fits\n"));
  EXPECT_FALSE(lines->first_error());
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = 8;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  auto failed = lines->Append("does not fit\n");
  auto again = lines->Append("nor this\n");
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, old_handler);
  ASSERT_FALSE(failed);
  EXPECT_FALSE(again);
  ASSERT_TRUE(lines->first_error());
  EXPECT_EQ(lines->first_error()->errno_value, EFBIG);
  EXPECT_EQ(
      EnglishText(lines->first_error()->what).rfind("write(" + (dir / "out").string() + ")", 0),
      0u);
  auto first = FirstWriteError({nullptr, &*lines});
  ASSERT_TRUE(first);
  EXPECT_EQ(first->errno_value, EFBIG);
  EXPECT_FALSE(FirstWriteError({nullptr}));
}

}  // namespace
}  // namespace headroom
