#include "watch/log_tee.h"

#include <gtest/gtest.h>

namespace headroom {
namespace {

WallTime At(int64_t ms) { return WallTime(std::chrono::milliseconds(ms)); }

TEST(LogTee, SplitsOnNewlineAndCarriageReturnAndStampsEachSegment) {
  LogTee tee;
  std::string out;
  tee.Feed("epoch 1\n\r 10%|#  | 1/10\r 20%|## | 2/10\r\n", At(1'000), &out);
  EXPECT_EQ(out,
            "1970-01-01T00:00:01.000Z epoch 1\n"
            "1970-01-01T00:00:01.000Z  10%|#  | 1/10\n"
            "1970-01-01T00:00:01.000Z  20%|## | 2/10\n");
}

TEST(LogTee, ASegmentKeepsTheArrivalOfItsFirstByteAcrossChunks) {
  LogTee tee;
  std::string out;
  tee.Feed("\r 10%|", At(1'000), &out);  // tqdm: "\r" + bar, written in two reads
  EXPECT_EQ(out, "");
  EXPECT_TRUE(tee.pending());
  tee.Feed(" 1/10", At(1'005), &out);
  tee.Feed("\r 20%| 2/10", At(2'000), &out);
  EXPECT_EQ(out, "1970-01-01T00:00:01.000Z  10%| 1/10\n");
  out.clear();
  tee.Feed("\n", At(2'001), &out);
  EXPECT_EQ(out, "1970-01-01T00:00:02.000Z  20%| 2/10\n");
}

TEST(LogTee, EveryChunkBoundaryGivesTheSameLines) {
  const std::string text = "a\r\nbb\rccc\n\n\rdddd\re";
  LogTee whole;
  std::string expected;
  whole.Feed(text, At(0), &expected);
  whole.Finish(&expected);
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    LogTee tee;
    std::string out;
    tee.Feed(text.substr(0, cut), At(0), &out);
    tee.Feed(text.substr(cut), At(0), &out);
    tee.Finish(&out);
    EXPECT_EQ(out, expected) << cut;
  }
  EXPECT_EQ(expected,
            "1970-01-01T00:00:00.000Z a\n1970-01-01T00:00:00.000Z bb\n"
            "1970-01-01T00:00:00.000Z ccc\n1970-01-01T00:00:00.000Z dddd\n"
            "1970-01-01T00:00:00.000Z e\n");
}

TEST(LogTee, FinalPartialSegmentIsWrittenAtEnd) {
  LogTee tee;
  std::string out;
  tee.Feed("no newline", At(0), &out);
  EXPECT_EQ(out, "");
  tee.Finish(&out);
  EXPECT_EQ(out, "1970-01-01T00:00:00.000Z no newline\n");
  out.clear();
  tee.Finish(&out);  // nothing pending: nothing more
  EXPECT_EQ(out, "");
}

TEST(LogTee, OverlongSegmentIsCutAndTheBufferStaysBounded) {
  LogTee tee;
  std::string out;
  tee.Feed(std::string(LogTee::kMaxSegmentBytes + 10, 'x'), At(0), &out);
  EXPECT_EQ(out.size(), 25 + LogTee::kMaxSegmentBytes + 1);
  out.clear();
  tee.Finish(&out);
  EXPECT_EQ(out, "1970-01-01T00:00:00.000Z xxxxxxxxxx\n");
}

TEST(LogTee, BinaryBytesPassUnchanged) {
  LogTee tee;
  std::string out;
  tee.Feed(std::string("a\0b\x1b[2K\n", 8), At(0), &out);
  EXPECT_EQ(out, std::string("1970-01-01T00:00:00.000Z a\0b\x1b[2K\n", 33));
}

}  // namespace
}  // namespace headroom
