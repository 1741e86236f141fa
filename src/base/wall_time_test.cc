#include "base/wall_time.h"

#include <gtest/gtest.h>

namespace headroom {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(WallTime, FormatsUtcWithMilliseconds) {
  EXPECT_EQ(FormatUtcIso8601(WallTime(seconds(0))), "1970-01-01T00:00:00.000Z");
  // 2025-03-14T09:26:53Z is 1741944413 s after the epoch (date -ud @1741944413).
  EXPECT_EQ(FormatUtcIso8601(WallTime(seconds(1741944413) + milliseconds(589))),
            "2025-03-14T09:26:53.589Z");
  EXPECT_EQ(FormatUtcIso8601(WallTime(milliseconds(-1))), "1969-12-31T23:59:59.999Z");
}

TEST(WallTime, ParsesWhatItFormats) {
  const WallTime t(seconds(1741944413) + milliseconds(589));
  EXPECT_EQ(ParseUtcIso8601(FormatUtcIso8601(t)), t);
  EXPECT_EQ(ParseUtcIso8601("2025-03-14T09:26:53Z"), WallTime(seconds(1741944413)));
  EXPECT_EQ(ParseUtcIso8601("2025-03-14T09:26:53.5Z"),
            WallTime(seconds(1741944413) + milliseconds(500)));
}

TEST(WallTime, RefusesTimesAnInt64OfNanosecondsCannotHold) {
  // Found by fuzzing: years outside 1678-2262 overflowed the nanosecond count (UB).
  for (const char* far : {"0000-01-01T00:00:00Z", "1000-01-01T00:00:00Z", "1677-09-21T00:12:44Z",
                          "2262-04-11T23:47:16Z", "2263-01-01T00:00:00Z", "9999-12-31T23:59:59Z"}) {
    SCOPED_TRACE(far);
    EXPECT_FALSE(ParseUtcIso8601(far));
  }
  EXPECT_FALSE(ParseIso8601WithOffset("9999-12-31T23:59:59+01:00"));
  EXPECT_FALSE(ParseIso8601WithOffset("1000-01-01T00:00:00-23:59"));
  // The edges of the range read, with an offset applied either way.
  EXPECT_EQ(FormatUtcIso8601(*ParseUtcIso8601("1677-09-22T00:12:44Z")), "1677-09-22T00:12:44.000Z");
  EXPECT_EQ(FormatUtcIso8601(*ParseUtcIso8601("2262-04-10T23:47:16Z")), "2262-04-10T23:47:16.000Z");
  EXPECT_EQ(FormatUtcIso8601(*ParseIso8601WithOffset("2262-04-10T23:47:16-23:59")),
            "2262-04-11T23:46:16.000Z");
  EXPECT_TRUE(ParseUtcIso8601("1678-01-01T00:00:00Z"));
  EXPECT_TRUE(ParseUtcIso8601("2261-12-31T23:59:59.999999999Z"));
}

TEST(WallTime, RejectsMalformedText) {
  for (const char* bad :
       {"", "2025-03-14", "2025-03-14T09:26:53", "2025-03-14 09:26:53Z", "2025-13-14T09:26:53Z",
        "2025-02-30T09:26:53Z", "2025-03-14T24:00:00Z", "2025-03-14T09:26:53.Z",
        "2025-03-14T09:26:53.5xZ", "2025-0a-14T09:26:53Z", "2025-03-14T09:26:53+01:00"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(ParseUtcIso8601(bad));
  }
}

TEST(WallTime, TimestampsWithOffsets) {
  EXPECT_EQ(ParseIso8601WithOffset("2026-11-29T10:00:00.123+00:00"),
            ParseUtcIso8601("2026-11-29T10:00:00.123Z"));
  EXPECT_EQ(ParseIso8601WithOffset("2026-11-29T15:30:00+0530"),
            ParseUtcIso8601("2026-11-29T10:00:00Z"));
  EXPECT_EQ(ParseIso8601WithOffset("2026-11-29T05:00:00-05:00"),
            ParseUtcIso8601("2026-11-29T10:00:00Z"));
  EXPECT_FALSE(ParseIso8601WithOffset("2026-11-29T10:00:00"));
  EXPECT_FALSE(ParseIso8601WithOffset("2026-11-29T10:00:00+25:00"));
  EXPECT_FALSE(ParseIso8601WithOffset("2026-11-29T10:00:00+1:00"));
  EXPECT_FALSE(ParseIso8601WithOffset("2026-11-29-10:00:00+00:00"));
  EXPECT_EQ(FormatIso8601WithOffset(WallTime(milliseconds(1'764'410'400'123))),
            "2025-11-29T10:00:00.123+00:00");
}

}  // namespace
}  // namespace headroom
