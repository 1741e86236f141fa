#include "explain/log_time.h"

#include <gtest/gtest.h>
#include <time.h>

namespace headroom {
namespace {

using std::chrono::milliseconds;

int64_t Millis(WallTime t) {
  return std::chrono::duration_cast<milliseconds>(t.time_since_epoch()).count();
}

TEST(LogTime, EdgesOfTheYearRange) {
  EXPECT_EQ(FormatUtcIso8601(ParseLogTimestamp("1900-01-01T00:00:00Z")->time),
            "1900-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatUtcIso8601(ParseLogTimestamp("2199-12-31T23:59:59.999+00:00")->time),
            "2199-12-31T23:59:59.999Z");
}

TEST(LogTime, DaysFromCivilAgreesWithTimegmOverFourHundredYears) {
  // One day in every 7 from 1800 to 2200: leap centuries (2000) and non-leap (1900, 2100).
  for (int64_t day = -62'000; day < 84'000; day += 7) {
    const time_t t = static_cast<time_t>(day * 86400);
    tm u{};
    gmtime_r(&t, &u);
    ASSERT_EQ(DaysFromCivil(u.tm_year + 1900, u.tm_mon + 1, u.tm_mday), day);
  }
}

TEST(LogTime, ArrivalStampWithZ) {
  const auto ts = ParseLogTimestamp("2026-11-29T10:00:00.123Z rest");
  ASSERT_TRUE(ts);
  EXPECT_TRUE(ts->has_zone);
  EXPECT_EQ(ts->length, 24u);
  EXPECT_EQ(FormatUtcIso8601(ts->time), "2026-11-29T10:00:00.123Z");
}

TEST(LogTime, NumericOffsetsMoveToUtc) {
  const auto plus = ParseLogTimestamp("2026-11-29T15:30:00+05:30");
  ASSERT_TRUE(plus);
  EXPECT_EQ(FormatUtcIso8601(plus->time), "2026-11-29T10:00:00.000Z");
  EXPECT_EQ(plus->length, 25u);
  const auto minus = ParseLogTimestamp("2026-11-29T02:00:00-0800");
  ASSERT_TRUE(minus);
  EXPECT_EQ(FormatUtcIso8601(minus->time), "2026-11-29T10:00:00.000Z");
  const auto zero = ParseLogTimestamp("2026-11-29T10:00:00.5+00:00");
  ASSERT_TRUE(zero);
  EXPECT_EQ(Millis(zero->time) % 1000, 500);
}

TEST(LogTime, PythonAndMegatronStampsHaveNoZone) {
  const auto axolotl = ParseLogTimestamp("2026-06-20 15:38:29,823] [INFO]");
  ASSERT_TRUE(axolotl);
  EXPECT_FALSE(axolotl->has_zone);
  EXPECT_EQ(axolotl->length, 23u);
  EXPECT_EQ(FormatUtcIso8601(axolotl->time), "2026-06-20T15:38:29.823Z");
  const auto megatron = ParseLogTimestamp("2025-08-01 07:19:37] iteration");
  ASSERT_TRUE(megatron);
  EXPECT_EQ(megatron->length, 19u);
  EXPECT_FALSE(megatron->has_zone);
}

TEST(LogTime, NanosecondsKeptAndExtraDigitsDropped) {
  const auto ts = ParseLogTimestamp("1970-01-01T00:00:01.123456789123Z");
  ASSERT_TRUE(ts);
  EXPECT_EQ(ts->length, 33u);
  EXPECT_EQ(
      std::chrono::duration_cast<std::chrono::nanoseconds>(ts->time.time_since_epoch()).count(),
      1'123'456'789);
}

TEST(LogTime, LeapDays) {
  EXPECT_TRUE(ParseLogTimestamp("2024-02-29T00:00:00Z"));
  EXPECT_TRUE(ParseLogTimestamp("2000-02-29T00:00:00Z"));
  EXPECT_FALSE(ParseLogTimestamp("2026-02-29T00:00:00Z"));
  EXPECT_FALSE(ParseLogTimestamp("1900-02-29T00:00:00Z"));
}

TEST(LogTime, RejectsWhatIsNotATime) {
  for (const char* bad :
       {"", "2026-11-29", "2026-13-01T00:00:00Z", "2026-04-31T00:00:00Z", "2026-11-29T24:00:00Z",
        "2026-11-29T10:60:00Z", "2026-11-29X10:00:00Z", "2026-11-29T10:00:00.Z",
        "2026-11-29T10:00:00+25:00", "2026-11-29T10:00:00+05:61", "2026-1a-29T10:00:00Z",
        "-026-11-29T10:00:00Z", "0026-11-29T10:00:00Z", "9999-12-31T23:59:59Z",
        "1899-12-31T23:59:59Z"}) {
    EXPECT_FALSE(ParseLogTimestamp(bad)) << bad;
  }
}

TEST(LogTime, ASignNotFollowedByAnOffsetIsLeftAlone) {
  const auto ts = ParseLogTimestamp("2026-11-29 10:00:00-step 3");
  ASSERT_TRUE(ts);
  EXPECT_FALSE(ts->has_zone);
  EXPECT_EQ(ts->length, 19u);
}

}  // namespace
}  // namespace headroom
