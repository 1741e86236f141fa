// ExplainWindow on literal samples: each cause's test, what is unavailable and why, and the
// verdict's words as message values (English here; the terminal translates them). Whole
// synthetic runs through the log parser are in tests/explain/explain_runs_test.cc.
#include "explain/verdict.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace headroom {
namespace {

const WallTime kStart = WallTime{} + std::chrono::hours(24 * 365 * 50);

SlowdownWindow Window(int seconds = 60) {
  SlowdownWindow w;
  w.first_step = 10;
  w.last_step = 20;
  w.start_time = kStart;
  w.end_time = kStart + std::chrono::seconds(seconds);
  w.seconds = seconds;
  w.factor = 2;
  return w;
}

// Samples every 10 s across the window, each shaped by `fill`.
template <typename Fill>
std::vector<Sample> Samples(Fill fill) {
  std::vector<Sample> out;
  for (int i = 0; i <= 6; ++i) {
    Sample s;
    s.time = kStart + std::chrono::seconds(10 * i);
    fill(s);
    out.push_back(s);
  }
  return out;
}

PlatformProfile Discrete() {
  PlatformProfile p;
  p.kind = PlatformKind::kDiscrete;
  p.sustained_power_mw = 300'000;
  p.rated_power_mw = 300'000;
  p.normal_sm_clock_mhz = 1800;
  return p;
}

bool Mentions(const std::vector<Message>& lines, std::string_view text) {
  return std::any_of(lines.begin(), lines.end(), [&](const Message& m) {
    return EnglishText(m).find(text) != std::string::npos;
  });
}

bool EvidenceMentions(const WindowVerdict& v, std::string_view text) {
  return std::any_of(v.evidence.begin(), v.evidence.end(), [&](const Evidence& e) {
    return EnglishText(e.text).find(text) != std::string::npos;
  });
}

TEST(ExplainWindow, WithoutWallTimesNothingCanBeLinedUp) {
  SlowdownWindow w = Window();
  w.start_time.reset();
  w.end_time.reset();
  const WindowVerdict v = ExplainWindow(w, VerdictInputs{});
  EXPECT_EQ(v.cause, SlowdownCause::kUnexplained);
  EXPECT_TRUE(Mentions(v.unavailable, "all: the log has no wall-clock times"))
      << v.unavailable.size();
  EXPECT_NE(EnglishText(v.advice).find("data loader"), std::string::npos);
}

TEST(ExplainWindow, WithoutSamplesItSaysSo) {
  VerdictInputs in;
  in.profile = Discrete();
  const WindowVerdict v = ExplainWindow(Window(), in);
  EXPECT_EQ(v.cause, SlowdownCause::kUnexplained);
  EXPECT_TRUE(Mentions(v.unavailable, "samples: no --samples file"));
}

TEST(ExplainWindow, AThermalBitIsTheDriversOwnWord) {
  const auto samples = Samples([](Sample& s) {
    s.clock_event_reasons = 0x20;  // sw_thermal_slowdown
    s.sm_clock_mhz = 1700;
    s.power_mw = 250'000;
    s.gpu_utilization_pct = 99;
  });
  VerdictInputs in;
  in.profile = Discrete();
  in.samples = &samples;
  in.sample_interval_s = 10;
  const WindowVerdict v = ExplainWindow(Window(), in);
  EXPECT_EQ(v.cause, SlowdownCause::kThermal);
  EXPECT_EQ(v.readings.reasons, std::vector<std::string>{"sw_thermal_slowdown"});
  EXPECT_TRUE(EvidenceMentions(v, "clock event reasons sw_thermal_slowdown set in 7 of 7 samples"));
  EXPECT_NE(EnglishText(v.advice).find("do not retune batch"), std::string::npos);
  EXPECT_TRUE(Mentions(v.unavailable, "other GPU processes: no --events file"));
}

TEST(ExplainWindow, AnUnderfedGpuWithBusyCpusIsHostSide) {
  const auto samples = Samples([](Sample& s) {
    s.clock_event_reasons = 0;
    s.sm_clock_mhz = 1800;
    s.power_mw = 100'000;
    s.gpu_utilization_pct = 20;
    s.cpu_util_pct = 95;
  });
  VerdictInputs in;
  in.profile = Discrete();
  in.samples = &samples;
  in.sample_interval_s = 10;
  const WindowVerdict v = ExplainWindow(Window(), in);
  EXPECT_EQ(v.cause, SlowdownCause::kHostSide);
  EXPECT_TRUE(EvidenceMentions(
      v, "GPU underfed (20% utilization, under 50%) while the CPUs were 95% busy"));
  EXPECT_NE(EnglishText(v.advice).find("the GPU waited for the host"), std::string::npos);
}

TEST(ExplainWindow, AMissingColumnIsUnavailableNotZero) {
  const auto samples = Samples([](Sample& s) {
    s.sm_clock_mhz = 1800;
    s.gpu_utilization_pct = 20;  // no cpu.util column
  });
  VerdictInputs in;
  in.profile = Discrete();
  in.samples = &samples;
  in.sample_interval_s = 10;
  const WindowVerdict v = ExplainWindow(Window(), in);
  EXPECT_NE(v.cause, SlowdownCause::kHostSide);
  EXPECT_TRUE(Mentions(v.unavailable, "host-side: no cpu.util readings in the window"));
  EXPECT_TRUE(Mentions(v.unavailable, "clock event reasons: no readings in the window"));
}

TEST(SlowdownCause, NamesAreIdentifiersAndWordsAreTheirEnglish) {
  for (SlowdownCause c :
       {SlowdownCause::kThermal, SlowdownCause::kClockCollapse, SlowdownCause::kContention,
        SlowdownCause::kHostSide, SlowdownCause::kUnexplained}) {
    EXPECT_EQ(EnglishText(SlowdownCauseWord(c)), SlowdownCauseName(c));
  }
  EXPECT_EQ(SlowdownCauseName(SlowdownCause::kClockCollapse), "clock-collapse");
  EXPECT_NE(EnglishText(SlowdownCauseAdvice(SlowdownCause::kClockCollapse, PlatformKind::kGb10))
                .find("unplug the power for 60 s"),
            std::string::npos);
}

}  // namespace
}  // namespace headroom
