#include "top/text_width.h"

#include <gtest/gtest.h>

#include "top_testing.h"

namespace headroom {
namespace {

class TopTextWidth : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(locale_.ok()) << "no C.UTF-8 locale"; }
  testing::ScopedUtf8Locale locale_;
};

TEST_F(TopTextWidth, AsciiWideAndCombiningCharacters) {
  EXPECT_EQ(DisplayWidth("pool"), 4u);
  EXPECT_EQ(DisplayWidth("記憶體池"), 8u);                  // four CJK characters, two columns each
  EXPECT_EQ(DisplayWidth("e\xCC\x81"), 1u);                 // e + combining acute
  EXPECT_EQ(DisplayWidth("\xE2\x96\x81\xE2\x96\x88"), 2u);  // two block elements
  EXPECT_EQ(DisplayWidth("可用 114.99 GiB"), 15u);
}

TEST_F(TopTextWidth, DecodeRejectsMalformedUtf8ByteByByte) {
  size_t pos = 0;
  EXPECT_EQ(DecodeUtf8("\xC0\xAF", pos), 0xFFFDu);  // overlong '/'
  EXPECT_EQ(pos, 1u);
  pos = 0;
  EXPECT_EQ(DecodeUtf8("\xED\xA0\x80", pos), 0xFFFDu);  // a UTF-16 surrogate
  pos = 0;
  EXPECT_EQ(DecodeUtf8("\xE8\xA8", pos), 0xFFFDu);  // cut short
  pos = 0;
  EXPECT_EQ(DecodeUtf8("\xE8\xA8\x98", pos), 0x8A18u);  // 記
  EXPECT_EQ(pos, 3u);
}

TEST_F(TopTextWidth, TerminalSafeReplacesControlsAndBadBytes) {
  // An escape sequence in a command line must not reach the terminal.
  EXPECT_EQ(TerminalSafe("a\x1b[2Jb\tc\x7f", true), "a?[2Jb?c?");
  EXPECT_EQ(TerminalSafe("x\xff"
                         "y",
                         true),
            "x?y");
  EXPECT_EQ(TerminalSafe("\xC2\x9B"
                         "31m",
                         true),
            "?31m");                                              // C1 CSI
  EXPECT_EQ(TerminalSafe("\xEF\xBF\xBD", true), "\xEF\xBF\xBD");  // a real U+FFFD stays
  // Not UTF-8: ASCII only, one '?' per character, not per byte.
  EXPECT_EQ(TerminalSafe("記憶體 ok", false), "??? ok");
}

TEST_F(TopTextWidth, FitNeverSplitsAWideCharacterAndKeepsTheWidth) {
  EXPECT_EQ(FitWidth("short", 10, true), "short");
  EXPECT_EQ(FitWidth("abcdefghij", 5, true), "abcd\xE2\x80\xA6");
  EXPECT_EQ(FitWidth("abcdefghij", 5, false), "abcd~");
  // 記憶體池 is 8 columns; in 6 the third character would need columns 5-6 and the ellipsis
  // column 6: two characters, a blank, the ellipsis.
  const std::string cut = FitWidth("記憶體池", 6, true);
  EXPECT_EQ(cut, "記憶 \xE2\x80\xA6");
  EXPECT_EQ(DisplayWidth(cut), 6u);
  for (size_t cols = 0; cols < 12; ++cols) {
    EXPECT_LE(DisplayWidth(FitWidth("頁面快取 page cache", cols, true)), cols) << cols;
    EXPECT_EQ(DisplayWidth(PadToWidth("頁面快取", cols, true)), cols) << cols;
  }
  EXPECT_EQ(PadToWidth("42", 5, true, true), "   42");
  EXPECT_EQ(FitWidth("anything", 0, true), "");
}

}  // namespace
}  // namespace headroom
