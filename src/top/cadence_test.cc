// SampleCadence on literal clock readings: slots a fixed interval apart, the wait rounded
// up and never negative, and an overrun skipped only when asked.
#include "top/cadence.h"

#include <gtest/gtest.h>

namespace headroom {
namespace {

using std::chrono::milliseconds;
const SampleCadence::TimePoint kStart{std::chrono::seconds(1000)};

TEST(TopCadence, SlotsAreAnIntervalApartWhateverTheDrawTook) {
  SampleCadence c(milliseconds(1000), kStart);
  EXPECT_TRUE(c.Due(kStart));
  c.Advance(kStart + milliseconds(300), /*skip_overrun=*/true);  // sampled 300 ms late
  EXPECT_EQ(c.next(), kStart + milliseconds(1000));
  EXPECT_FALSE(c.Due(kStart + milliseconds(999)));
  EXPECT_EQ(c.WaitFrom(kStart + milliseconds(400)), milliseconds(600));
  EXPECT_EQ(c.WaitFrom(kStart + std::chrono::microseconds(400'500)), milliseconds(600));
  EXPECT_EQ(c.WaitFrom(kStart + milliseconds(1500)), milliseconds(0));
}

TEST(TopCadence, AnOverrunIsSkippedOnlyWhenAsked) {
  SampleCadence skip(milliseconds(100), kStart);
  skip.Advance(kStart + milliseconds(5000), true);
  EXPECT_EQ(skip.next(), kStart + milliseconds(5100));
  SampleCadence keep(milliseconds(100), kStart);
  keep.Advance(kStart + milliseconds(5000), false);
  EXPECT_EQ(keep.next(), kStart + milliseconds(100));
}

}  // namespace
}  // namespace headroom
