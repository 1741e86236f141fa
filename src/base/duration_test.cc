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

}  // namespace
}  // namespace headroom
