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

}  // namespace
}  // namespace headroom
