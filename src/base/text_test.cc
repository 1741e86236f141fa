#include "base/text.h"

#include <gtest/gtest.h>

namespace headroom {
namespace {

TEST(Text, EditDistanceCountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("reserve", "reserve"), 0u);
  EXPECT_EQ(EditDistance("reserv", "reserve"), 1u);             // insert
  EXPECT_EQ(EditDistance("kill_levell", "kill_level"), 1u);     // delete
  EXPECT_EQ(EditDistance("llama-3.1-8b", "llama-3.1-7b"), 1u);  // substitute
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
}

TEST(Text, AsciiLowerAndTrimBlanksLeaveOtherBytesAlone) {
  EXPECT_EQ(AsciiLower("QLoRA \xC3\x89"), "qlora \xC3\x89");
  EXPECT_EQ(TrimBlanks(" \t4GiB\r\n"), "4GiB");
}

TEST(Text, ControlsAsQuestionMarksReplacesC0AndDelOnly) {
  EXPECT_EQ(ControlsAsQuestionMarks("a\nb\tc\x1b[0m\x7f"), "a?b?c?[0m?");
  EXPECT_EQ(ControlsAsQuestionMarks("caf\xC3\xA9 ~"), "caf\xC3\xA9 ~");
  EXPECT_EQ(ControlsAsQuestionMarks(""), "");
}

TEST(Text, EscapeControlsWritesEachControlAsAnEscape) {
  EXPECT_EQ(EscapeControls("\x1b]0;X\x07"), "\\x1b]0;X\\x07");
  EXPECT_EQ(EscapeControls("a\nb\tc\rd\x7f"), "a\\x0ab\\x09c\\x0dd\\x7f");
  EXPECT_EQ(EscapeControls(std::string("nul\0!", 5)), "nul\\x00!");
  // C1 controls as UTF-8 (U+009B is a one-character CSI); other UTF-8 and lone bytes kept.
  EXPECT_EQ(EscapeControls("x\xC2\x9B"
                           "2J\xC2\x80"),
            "x\\u009b2J\\u0080");
  EXPECT_EQ(EscapeControls("caf\xC3\xA9 \xC2\xA0~ a\\b \xC2"), "caf\xC3\xA9 \xC2\xA0~ a\\b \xC2");
  EXPECT_EQ(EscapeControls(""), "");
}

TEST(Text, ShellQuotedQuotesOnlyWhatAShellWouldSplitOrExpand) {
  EXPECT_EQ(ShellQuoted({}), "");
  EXPECT_EQ(ShellQuoted({"python", "train.py", "--bs=4"}), "python train.py --bs=4");
  EXPECT_EQ(ShellQuoted({"echo", "a b", ""}), "echo 'a b' ''");
  EXPECT_EQ(ShellQuoted({"sh", "-c", "it's $HOME; ls *"}), "sh -c 'it'\\''s $HOME; ls *'");
  EXPECT_EQ(ShellQuoted({"a\\b", "x|y", "(z)"}), "'a\\b' 'x|y' '(z)'");
  EXPECT_EQ(ShellQuoted({"line\nbreak"}), "line\nbreak");  // controls are the caller's
}

TEST(Text, ShortenUtf8CutsOnCodePoints) {
  EXPECT_EQ(ShortenUtf8("abcdef", 6), "abcdef");
  EXPECT_EQ(ShortenUtf8("abcdefg", 6), "abc...");
  // Each of these is two bytes: cut after three code points, not three bytes.
  const std::string accents = "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9";
  EXPECT_EQ(ShortenUtf8(accents, 6), "\xC3\xA9\xC3\xA9\xC3\xA9...");
  EXPECT_EQ(ShortenUtf8(accents, 7), accents);
  EXPECT_EQ(ShortenUtf8("", 3), "");
}

}  // namespace
}  // namespace headroom
