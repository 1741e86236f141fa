#include "top/sparkline.h"

#include <gtest/gtest.h>

#include "top/frame.h"
#include "top/history.h"
#include "top/text_width.h"
#include "top_testing.h"

namespace headroom {
namespace {

using Values = std::vector<std::optional<double>>;

TEST(TopSparkline, EightLevelsNewestRightMissingBlank) {
  const Values v = {0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, std::nullopt};
  EXPECT_EQ(Sparkline(v, 10, {0, 8}, false), "_.-=+*#@@ ");
  EXPECT_EQ(Sparkline(v, 10, {0, 8}, true),
            "\xE2\x96\x81\xE2\x96\x82\xE2\x96\x83\xE2\x96\x84\xE2\x96\x85\xE2\x96\x86\xE2\x96\x87"
            "\xE2\x96\x88\xE2\x96\x88 ");
  // Wider than the history: blank on the left. Narrower: the newest values only.
  EXPECT_EQ(Sparkline({8.0}, 4, {0, 8}, false), "   @");
  EXPECT_EQ(Sparkline(v, 3, {0, 8}, false), "@@ ");
  // Out of range values are clamped, not wrapped.
  EXPECT_EQ(Sparkline({-5.0, 100.0}, 2, {0, 8}, false), "_@");
}

TEST(TopSparkline, AutoRangeWidensFlatLinesAndKeepsTheFloor) {
  const GraphRange flat = AutoRange({45.0, 45.0, std::nullopt}, 10);
  EXPECT_DOUBLE_EQ(flat.lo, 40);
  EXPECT_DOUBLE_EQ(flat.hi, 50);
  const GraphRange low = AutoRange({1.0, 2.0}, 10);
  EXPECT_DOUBLE_EQ(low.lo, 0);  // not -3.5
  EXPECT_DOUBLE_EQ(low.hi, 10);
  const GraphRange none = AutoRange({std::nullopt}, 5, 1);
  EXPECT_DOUBLE_EQ(none.lo, 1);
  EXPECT_DOUBLE_EQ(none.hi, 6);
  const GraphRange wide = AutoRange({10.0, 90.0}, 10);
  EXPECT_DOUBLE_EQ(wide.lo, 10);
  EXPECT_DOUBLE_EQ(wide.hi, 90);
}

TEST(TopSparkline, MemoryBarPartsAndMarks) {
  // 10 columns: 50 % used, 20 % cache, the rest free; a warn mark at 70 %, kill at 90 %.
  const auto spans = MemoryBar(10, 0.5, 0.2, {{0.7, 'W'}, {0.9, 'K'}}, false);
  FrameRow row{spans};
  EXPECT_EQ(RowText(row), "#####++W.K");
  EXPECT_EQ(spans.front().role, Role::kBarUsed);
  EXPECT_EQ(spans[1].role, Role::kBarCache);
  EXPECT_EQ(spans[2].role, Role::kMark);
  // Fractions out of range are clamped; a cache larger than what is left is cut.
  EXPECT_EQ(RowText(FrameRow{MemoryBar(4, 2.0, 1.0, {}, false)}), "####");
  EXPECT_EQ(RowText(FrameRow{MemoryBar(4, 0.5, 0.9, {{1.5, 'K'}}, false)}), "##+K");
  testing::ScopedUtf8Locale utf8;
  EXPECT_EQ(DisplayWidth(RowText(FrameRow{MemoryBar(30, 0.3, 0.1, {{0.5, 'W'}}, true)})), 30u);
  EXPECT_TRUE(MemoryBar(0, 0.5, 0.1, {{0.5, 'W'}}, true).empty());
}

TEST(TopHistory, RingKeepsTheNewestCapacityPoints) {
  History h(3);
  EXPECT_TRUE(h.empty());
  for (int i = 0; i < 5; ++i) {
    HistoryPoint p;
    p.temperature_c = i;
    h.Push(p);
  }
  EXPECT_EQ(h.size(), 3u);
  EXPECT_EQ(h.capacity(), 3u);
  EXPECT_EQ(h.at(0).temperature_c, 2);
  EXPECT_EQ(h.newest().temperature_c, 4);
  EXPECT_EQ(h.Last(Metric::kTemperature, 2), (Values{3.0, 4.0}));
  EXPECT_EQ(h.Last(Metric::kTemperature, 10).size(), 3u);
  EXPECT_EQ(h.Last(Metric::kPower, 3), (Values{std::nullopt, std::nullopt, std::nullopt}));
  EXPECT_EQ(History(0).capacity(), 1u);
  // A long run stays at its capacity.
  History big;
  for (int i = 0; i < 5000; ++i) big.Push(HistoryPoint{});
  EXPECT_EQ(big.size(), kDefaultHistoryPoints);
}

TEST(TopHistory, PointFromSampleUnits) {
  Sample s;
  s.mem_total_bytes = 100;
  s.mem_available_bytes = 30;
  s.power_mw = 99'500;
  s.sm_clock_mhz = 2405;
  const HistoryPoint p = PointFromSample(s);
  EXPECT_EQ(p.used_bytes, 70.0);
  EXPECT_EQ(p.power_w, 99.5);
  EXPECT_EQ(p.sm_clock_mhz, 2405.0);
  EXPECT_FALSE(p.temperature_c);
  s.mem_available_bytes = 200;  // a torn read: no negative use
  EXPECT_FALSE(PointFromSample(s).used_bytes);
}

}  // namespace
}  // namespace headroom
