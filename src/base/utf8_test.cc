#include "base/utf8.h"

#include <gtest/gtest.h>

namespace headroom {
namespace {

std::u32string DecodeAll(std::string_view text) {
  std::u32string out;
  for (size_t pos = 0; pos < text.size();) out += DecodeUtf8(text, pos);
  return out;
}

TEST(Utf8, DecodesEachLengthAndRoundTrips) {
  const std::u32string cps = {U'a', U'é', U'記', U'😀', U'\U0010FFFF'};
  std::string text;
  for (char32_t c : cps) AppendUtf8(text, c);
  EXPECT_EQ(text, "a\xC3\xA9\xE8\xA8\x98\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF");
  EXPECT_EQ(DecodeAll(text), cps);
}

TEST(Utf8, EachBadByteIsOneReplacement) {
  constexpr char32_t R = kReplacementCharacter;
  EXPECT_EQ(DecodeAll("\x80x"), (std::u32string{R, U'x'}));                // stray continuation
  EXPECT_EQ(DecodeAll("\xC0\xAFx"), (std::u32string{R, R, U'x'}));         // overlong '/'
  EXPECT_EQ(DecodeAll("\xED\xA0\x80"), (std::u32string{R, R, R}));         // a UTF-16 surrogate
  EXPECT_EQ(DecodeAll("\xF4\x90\x80\x80"), (std::u32string{R, R, R, R}));  // past U+10FFFF
  EXPECT_EQ(DecodeAll("\xE8\xA8"), (std::u32string{R, R}));                // cut short
  EXPECT_EQ(DecodeAll("\xFF"), (std::u32string{R}));
}

}  // namespace
}  // namespace headroom
