#include "gpu/clock_events.h"

#include <gtest/gtest.h>

namespace headroom {
namespace {

using Names = std::vector<std::string>;

// One bit at a time against the header's values (reference section 1.3). Written out
// literally, not from the table, so a shuffled table fails.
TEST(ClockEventReasons, EachBitHasTheHeaderName) {
  EXPECT_EQ(DecodeClockEventReasons(0x001), Names{"gpu_idle"});
  EXPECT_EQ(DecodeClockEventReasons(0x002), Names{"applications_clocks_setting"});
  EXPECT_EQ(DecodeClockEventReasons(0x004), Names{"sw_power_cap"});
  EXPECT_EQ(DecodeClockEventReasons(0x008), Names{"hw_slowdown"});
  EXPECT_EQ(DecodeClockEventReasons(0x010), Names{"sync_boost"});
  EXPECT_EQ(DecodeClockEventReasons(0x020), Names{"sw_thermal_slowdown"});
  EXPECT_EQ(DecodeClockEventReasons(0x040), Names{"hw_thermal_slowdown"});
  EXPECT_EQ(DecodeClockEventReasons(0x080), Names{"hw_power_brake_slowdown"});
  EXPECT_EQ(DecodeClockEventReasons(0x100), Names{"display_clock_setting"});
}

TEST(ClockEventReasons, NoneIsEmpty) { EXPECT_TRUE(DecodeClockEventReasons(0).empty()); }

TEST(ClockEventReasons, SeveralBitsInBitOrder) {
  // A power-capped GPU that is also thermally slowed: 0x04 | 0x20 | 0x40.
  EXPECT_EQ(DecodeClockEventReasons(0x64),
            (Names{"sw_power_cap", "sw_thermal_slowdown", "hw_thermal_slowdown"}));
}

TEST(ClockEventReasons, UnknownBitsAreShownNotDropped) {
  EXPECT_EQ(DecodeClockEventReasons(0x204), (Names{"sw_power_cap", "unknown_0x200"}));
  EXPECT_EQ(DecodeClockEventReasons(0x8000000000000000ULL), Names{"unknown_0x8000000000000000"});
}

TEST(ClockEventReasons, SlowdownExcludesIdleAndSettings) {
  EXPECT_FALSE(IsClockSlowdown(0));
  EXPECT_FALSE(IsClockSlowdown(0x001 | 0x002 | 0x100));  // idle, app clocks, display
  for (const uint64_t bit : {0x04ULL, 0x08ULL, 0x10ULL, 0x20ULL, 0x40ULL, 0x80ULL}) {
    EXPECT_TRUE(IsClockSlowdown(bit)) << bit;
  }
}

// On screen a reason keeps its name (English: the name alone) and gains an explanation in
// another language (cli/message_text_test.cc renders it); the decoded names, which CSV,
// events, JSON and metrics use, never change.
TEST(ClockEventReasons, WordsAreTheNameInEnglishAndNamesDoNotChange) {
  EXPECT_EQ(EnglishText(ClockEventReasonWord("sw_power_cap")), "sw_power_cap");
  EXPECT_EQ(EnglishText(ClockEventReasonWord("unknown_0x200")), "unknown_0x200");
  EXPECT_EQ(DecodeClockEventReasons(0x004), Names{"sw_power_cap"});
}

}  // namespace
}  // namespace headroom
