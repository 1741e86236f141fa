#include "base/duration.h"

#include <gtest/gtest.h>

namespace headroom {
namespace {

using std::chrono::microseconds;

TEST(ParseDuration, Units) {
  EXPECT_EQ(*ParseDuration("3s"), microseconds(3'000'000));
  EXPECT_EQ(*ParseDuration("3"), microseconds(3'000'000));
  EXPECT_EQ(*ParseDuration("500ms"), microseconds(500'000));
  EXPECT_EQ(*ParseDuration("1.5s"), microseconds(1'500'000));
  EXPECT_EQ(*ParseDuration("2m"), microseconds(120'000'000));
  EXPECT_EQ(*ParseDuration("1h"), microseconds(3'600'000'000LL));
  EXPECT_EQ(*ParseDuration("250us"), microseconds(250));
  EXPECT_EQ(*ParseDuration("0", true), microseconds(0));
}

TEST(ParseDuration, RejectsBadInput) {
  for (const char* bad :
       {"", "s", "-1s", "0", "0ms", "3x", "1e400s", "nan", "inf", " 3s", "9999h", "3 s"}) {
    EXPECT_FALSE(ParseDuration(bad).ok()) << bad;
  }
}

TEST(FormatElapsed, SecondsThenMinutesThenHours) {
  EXPECT_EQ(FormatElapsed(0), "0.0 s");
  EXPECT_EQ(FormatElapsed(12.34), "12.3 s");
  EXPECT_EQ(FormatElapsed(59.9), "59.9 s");
  EXPECT_EQ(FormatElapsed(60), "1 min 00 s");
  EXPECT_EQ(FormatElapsed(245.7), "4 min 05 s");
  EXPECT_EQ(FormatElapsed(3599), "59 min 59 s");
  EXPECT_EQ(FormatElapsed(3600), "1 h 00 min");
  EXPECT_EQ(FormatElapsed(7380 + 59), "2 h 03 min");
  EXPECT_EQ(FormatElapsed(100 * 3600), "100 h 00 min");
}

}  // namespace
}  // namespace headroom
