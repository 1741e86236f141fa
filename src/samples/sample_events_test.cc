#include "samples/sample_events.h"

#include <gtest/gtest.h>

namespace headroom {
namespace {

using std::chrono::milliseconds;

PlatformProfile Gb10() {
  GpuReading r;
  r.name = "NVIDIA GB10";
  return DetectPlatform(std::vector<GpuReading>{r});
}

// A busy GB10 at full clock.
Sample Busy(int64_t ms) {
  Sample s;
  s.time = WallTime(milliseconds(ms));
  s.temperature_c = 60;
  s.power_mw = 60'000;
  s.sm_clock_mhz = 2405;
  s.clock_event_reasons = 0;
  s.gpu_utilization_pct = 96;
  s.mem_available_bytes = 100ULL << 30;
  s.psi_some_avg10_pct = 0;
  s.gpu_pids = std::vector<uint32_t>{4242};
  return s;
}

std::vector<std::string> Types(const std::vector<SampleEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.type);
  return out;
}

TEST(SampleEvents, ThrottleReasonSetAndClearedButNotIdle) {
  SampleEventDetector d(Gb10());
  EXPECT_TRUE(d.Feed(Busy(0)).empty());
  Sample s = Busy(100);
  s.clock_event_reasons = 0x1 | 0x20;  // gpu_idle | sw_thermal_slowdown
  auto e = d.Feed(s);
  ASSERT_EQ(Types(e), std::vector<std::string>{"throttle_set"});
  EXPECT_NE(e[0].data.find("\"reason\":\"sw_thermal_slowdown\""), std::string::npos);
  EXPECT_TRUE(d.Feed(s).empty());  // still set: nothing new
  s.clock_event_reasons.reset();   // unreadable: neither set nor cleared
  EXPECT_TRUE(d.Feed(s).empty());
  EXPECT_EQ(Types(d.Feed(Busy(300))), std::vector<std::string>{"throttle_cleared"});
}

TEST(SampleEvents, PowerPlateauWhileTemperatureRisesOncePerEpisode) {
  SampleEventDetector d(Gb10());
  std::vector<std::string> seen;
  for (int i = 0; i < 12; ++i) {
    Sample s = Busy(i * 100);
    s.power_mw = 99'500 + 500 * (i % 3);  // the fake gb10's flat 100 W
    s.temperature_c = 45 + 3 * i;
    for (auto& t : Types(d.Feed(s))) seen.push_back(t);
  }
  EXPECT_EQ(seen, std::vector<std::string>{"power_plateau"});
  // Flat power at a steady temperature is not a plateau event.
  SampleEventDetector steady(Gb10());
  for (int i = 0; i < 12; ++i) {
    Sample s = Busy(i * 100);
    s.power_mw = 100'000;
    EXPECT_TRUE(steady.Feed(s).empty());
  }
  // Far below the sustained figure: no event.
  SampleEventDetector low(Gb10());
  for (int i = 0; i < 12; ++i) {
    Sample s = Busy(i * 100);
    s.power_mw = 50'000;
    s.temperature_c = 45 + 3 * i;
    EXPECT_TRUE(low.Feed(s).empty());
  }
}

TEST(SampleEvents, ClockCollapseWithoutReasonBitAndRecovery) {
  SampleEventDetector d(Gb10());
  EXPECT_TRUE(d.Feed(Busy(0)).empty());
  Sample slow = Busy(100);
  slow.sm_clock_mhz = 700;
  EXPECT_TRUE(d.Feed(slow).empty());  // one sample is not enough
  slow.time += milliseconds(100);
  auto e = d.Feed(slow);
  ASSERT_EQ(Types(e), std::vector<std::string>{"clock_collapse"});
  EXPECT_NE(e[0].data.find("\"degraded_band\":true"), std::string::npos);
  slow.time += milliseconds(100);
  EXPECT_TRUE(d.Feed(slow).empty());
  EXPECT_EQ(Types(d.Feed(Busy(500))), std::vector<std::string>{"clock_recovered"});
}

TEST(SampleEvents, LowClockWithAReasonOrIdleOrHighPowerIsNotACollapse) {
  auto run = [](auto&& change) {
    SampleEventDetector d(Gb10());
    std::vector<std::string> all;
    for (int i = 0; i < 5; ++i) {
      Sample s = Busy(i * 100);
      s.sm_clock_mhz = 700;
      change(s);
      for (auto& t : Types(d.Feed(s))) all.push_back(t);
    }
    return all;
  };
  EXPECT_EQ(run([](Sample& s) { s.clock_event_reasons = 0x40; }),
            std::vector<std::string>{"throttle_set"});
  EXPECT_TRUE(run([](Sample& s) { s.gpu_utilization_pct = 3; }).empty());
  EXPECT_TRUE(run([](Sample& s) { s.power_mw = 200'000; }).empty());
  EXPECT_TRUE(run([](Sample& s) { s.power_mw.reset(); }).empty());
  // Without a platform profile (no GPU) nothing is judged.
  SampleEventDetector none(PlatformProfile{});
  Sample s = Busy(0);
  s.sm_clock_mhz = 100;
  EXPECT_TRUE(none.Feed(s).empty());
  EXPECT_TRUE(none.Feed(s).empty());
}

TEST(SampleEvents, MemoryPressureFromPsiWithHysteresis) {
  SampleEventDetector d(Gb10());
  Sample s = Busy(0);
  d.Feed(s);
  s.psi_some_avg10_pct = 12.5;
  auto e = d.Feed(s);
  ASSERT_EQ(Types(e), std::vector<std::string>{"memory_pressure"});
  EXPECT_NE(e[0].data.find("\"cause\":\"psi\""), std::string::npos);
  s.psi_some_avg10_pct = 7;  // above half the threshold: same episode
  EXPECT_TRUE(d.Feed(s).empty());
  s.psi_some_avg10_pct = 11;
  EXPECT_TRUE(d.Feed(s).empty());
  s.psi_some_avg10_pct = 2;
  EXPECT_TRUE(d.Feed(s).empty());
  s.psi_some_avg10_pct = 10;
  EXPECT_EQ(Types(d.Feed(s)), std::vector<std::string>{"memory_pressure"});
}

TEST(SampleEvents, MemoryPressureFromAFastFall) {
  SampleEventDetector d(Gb10());
  Sample s = Busy(0);
  d.Feed(s);
  s.time += milliseconds(1000);
  *s.mem_available_bytes -= 512ULL << 20;  // 0.5 GiB in 1 s: under the minimum drop
  EXPECT_TRUE(d.Feed(s).empty());
  s.time += milliseconds(1000);
  *s.mem_available_bytes -= 3ULL << 30;  // 3 GiB in 1 s
  auto e = d.Feed(s);
  ASSERT_EQ(Types(e), std::vector<std::string>{"memory_pressure"});
  EXPECT_NE(e[0].data.find("memavailable_fall"), std::string::npos);
  s.time += milliseconds(1000);
  *s.mem_available_bytes -= 3ULL << 30;  // still falling: same episode
  EXPECT_TRUE(d.Feed(s).empty());
  s.time += milliseconds(30'000);
  *s.mem_available_bytes -= 3ULL << 30;  // 3 GiB over 30 s: slow
  EXPECT_TRUE(d.Feed(s).empty());
}

TEST(SampleEvents, NewGpuProcess) {
  SampleEventDetector d(Gb10());
  EXPECT_TRUE(d.Feed(Busy(0)).empty());  // the processes at start are the baseline
  Sample s = Busy(100);
  s.gpu_pids = std::vector<uint32_t>{4242, 777};
  auto e = d.Feed(s);
  ASSERT_EQ(Types(e), std::vector<std::string>{"gpu_process_started"});
  EXPECT_NE(e[0].data.find("\"pid\":777"), std::string::npos);
  s.gpu_pids.reset();  // list unreadable: no change reported
  EXPECT_TRUE(d.Feed(s).empty());
  EXPECT_EQ(Types(d.Feed(Busy(300))), std::vector<std::string>{"gpu_process_ended"});
}

TEST(SampleEvents, GpuLostOnceAndJsonRow) {
  SampleEventDetector d(Gb10());
  Sample s = Busy(0);
  s.gpu_lost = true;
  auto e = d.Feed(s);
  ASSERT_EQ(Types(e), std::vector<std::string>{"gpu_lost"});
  EXPECT_EQ(SampleEventJson(e[0]),
            "{\"type\":\"gpu_lost\",\"wall_time\":\"1970-01-01T00:00:00.000Z\",\"data\":{}}\n");
  EXPECT_TRUE(d.Feed(s).empty());
}

}  // namespace
}  // namespace headroom
