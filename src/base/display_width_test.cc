#include "base/display_width.h"

#include <gtest/gtest.h>

namespace headroom {
namespace {

TEST(DisplayWidth, CountsColumnsNotBytes) {
  EXPECT_EQ(DisplayWidth(""), 0u);
  EXPECT_EQ(DisplayWidth("--seq TEXT"), 10u);
  EXPECT_EQ(DisplayWidth("通過"), 4u);  // two CJK ideographs, six bytes
  EXPECT_EQ(DisplayWidth("--seq 文字"), 10u);
  EXPECT_EQ(DisplayWidth("（預設 1GiB）"), 13u);  // fullwidth parentheses are wide too
  EXPECT_EQ(DisplayWidth("、。「」"), 8u);        // CJK punctuation
  EXPECT_EQ(DisplayWidth("µs"), 2u);              // two bytes, one column
  EXPECT_EQ(DisplayWidth("°C"), 2u);              // Latin-1: one column each
}

TEST(DisplayWidth, ZeroWidthAndMalformedBytes) {
  EXPECT_EQ(DisplayWidth("e\xCC\x81"), 1u);  // e + combining acute accent
  EXPECT_EQ(DisplayWidth("a\xE2\x80\x8B"
                         "b"),
            2u);                            // a zero-width space between
  EXPECT_EQ(DisplayWidth("\xFF\xFE"), 2u);  // not UTF-8: one column per byte
  EXPECT_EQ(DisplayWidth("\xE6\x96"), 2u);  // a cut sequence: its bytes
  EXPECT_EQ(DisplayWidth("\xE6x"), 2u);     // a lead byte without its continuation
}

TEST(DisplayWidth, PadToWidthPadsByColumns) {
  EXPECT_EQ(PadToWidth("ok", 4), "ok  ");
  EXPECT_EQ(PadToWidth("警告", 4), "警告");
  EXPECT_EQ(PadToWidth("資訊", 6), "資訊  ");
  EXPECT_EQ(PadToWidth("longer", 3), "longer");
  EXPECT_EQ(PadToWidth("", 2), "  ");
}

}  // namespace
}  // namespace headroom
