// Known answers for `explain`: synthetic runs (synthetic_run.h) through the same parsers and
// analysis as the CLI: log -> StepTimes -> FindSlowdowns -> ExplainWindow with the samples.
#include <gtest/gtest.h>

#include <algorithm>

#include "explain/explain_report.h"
#include "explain/slowdown.h"
#include "explain/step_log.h"
#include "explain/step_times.h"
#include "explain/verdict.h"
#include "synthetic_run.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::MakeSyntheticRun;
using testing::Scenario;
using testing::TempDir;
using testing::WriteFile;

struct Explained {
  SlowdownAnalysis analysis;
  std::vector<WindowVerdict> verdicts;
  PlatformProfile profile;
  PlatformSource source = PlatformSource::kNone;
};

Explained Explain(const testing::SyntheticRun& run, std::optional<PlatformKind> forced = {},
                  bool with_samples = true) {
  Explained out;
  const auto timings = StepTimes(ParseStepLog(run.log));
  out.analysis = FindSlowdowns(timings);
  auto series = ParseSamplesCsv(run.samples_csv);
  EXPECT_TRUE(series.ok()) << (series.ok() ? "" : EnglishText(series.error().what));
  if (!series.ok()) return out;
  out.profile = ProfileFromSamples(*series, forced, &out.source);
  const RecordedEvents events = ParseEventLines(run.events_jsonl);
  VerdictInputs in;
  in.profile = out.profile;
  if (with_samples) in.samples = &series->samples;
  if (!run.events_jsonl.empty()) in.events = &events.events;
  in.sample_interval_s = 2.0;
  for (const auto& w : out.analysis.windows) out.verdicts.push_back(ExplainWindow(w, in));
  return out;
}

bool Mentions(const WindowVerdict& v, std::string_view text) {
  return std::any_of(v.evidence.begin(), v.evidence.end(), [&](const Evidence& e) {
    return EnglishText(e.text).find(text) != std::string::npos;
  });
}

bool Unavailable(const WindowVerdict& v, std::string_view text) {
  return std::any_of(v.unavailable.begin(), v.unavailable.end(), [&](const Message& u) {
    return EnglishText(u).find(text) != std::string::npos;
  });
}

// The window found matches the slow stretch the run was built with (steps 120-200).
void ExpectOneWindowAtTheSlowStretch(const Explained& e, const testing::SyntheticRun& run) {
  ASSERT_EQ(e.analysis.windows.size(), 1u);
  const auto& w = e.analysis.windows[0];
  EXPECT_EQ(w.first_step, 120);
  EXPECT_EQ(w.last_step, 200);
  EXPECT_NEAR(w.factor, 2.0, 0.01);
  EXPECT_NEAR(e.analysis.baseline_seconds_per_step, 0.5, 0.001);
  ASSERT_TRUE(w.start_time && w.end_time);
  EXPECT_EQ(*w.start_time, run.slow_start);
  EXPECT_EQ(*w.end_time, run.slow_end);
}

TEST(ExplainRuns, CleanRunHasNoWindow) {
  const auto e = Explain(MakeSyntheticRun(Scenario::kClean));
  EXPECT_EQ(e.analysis.steps, 299);  // intervals between 300 records
  EXPECT_NEAR(e.analysis.baseline_seconds_per_step, 0.5, 0.001);
  EXPECT_TRUE(e.analysis.windows.empty());
  EXPECT_EQ(e.profile.kind, PlatformKind::kGb10);
  EXPECT_EQ(e.source, PlatformSource::kHeader);
}

TEST(ExplainRuns, ThermalPlateauWithoutABit) {
  const auto run = MakeSyntheticRun(Scenario::kThermalPlateau);
  const auto e = Explain(run);
  ExpectOneWindowAtTheSlowStretch(e, run);
  const auto& v = e.verdicts[0];
  EXPECT_EQ(v.cause, SlowdownCause::kThermal);
  EXPECT_TRUE(Mentions(v, "power flat")) << v.evidence.size();
  EXPECT_TRUE(v.also.empty());
  EXPECT_NE(EnglishText(v.advice).find("do not retune batch size or precision"), std::string::npos);
  EXPECT_EQ(v.readings.temperature_c_min, 60);
  EXPECT_GE(v.readings.temperature_c_max.value_or(0), 78);
}

TEST(ExplainRuns, ThermalBit) {
  const auto run = MakeSyntheticRun(Scenario::kThermalBit);
  const auto e = Explain(run);
  ExpectOneWindowAtTheSlowStretch(e, run);
  EXPECT_EQ(e.verdicts[0].cause, SlowdownCause::kThermal);
  EXPECT_TRUE(Mentions(e.verdicts[0], "sw_thermal_slowdown"));
  EXPECT_EQ(e.verdicts[0].readings.reasons, std::vector<std::string>{"sw_thermal_slowdown"});
}

TEST(ExplainRuns, ClockCollapse) {
  const auto run = MakeSyntheticRun(Scenario::kClockCollapse, 300, 120, 200, 3.0);
  const auto e = Explain(run);
  ASSERT_EQ(e.analysis.windows.size(), 1u);
  EXPECT_NEAR(e.analysis.windows[0].factor, 3.0, 0.01);
  const auto& v = e.verdicts[0];
  EXPECT_EQ(v.cause, SlowdownCause::kClockCollapse);
  EXPECT_TRUE(Mentions(v, "700 MHz"));
  EXPECT_NE(EnglishText(v.advice).find("unplug"), std::string::npos);
  EXPECT_NE(EnglishText(v.advice).find("reboot does not"), std::string::npos);
}

TEST(ExplainRuns, ContentionFromAnotherProcessAndPressure) {
  const auto run = MakeSyntheticRun(Scenario::kContention);
  const auto e = Explain(run);
  ExpectOneWindowAtTheSlowStretch(e, run);
  const auto& v = e.verdicts[0];
  EXPECT_EQ(v.cause, SlowdownCause::kContention);
  EXPECT_TRUE(Mentions(v, "another process started using the GPU"));
  EXPECT_TRUE(Mentions(v, "PSI some avg10 up to 25.0%"));
  EXPECT_TRUE(Mentions(v, "MemAvailable fell"));
}

TEST(ExplainRuns, ContentionFromPressureAloneWithoutEvents) {
  auto run = MakeSyntheticRun(Scenario::kContention);
  run.events_jsonl.clear();
  const auto e = Explain(run);
  ASSERT_EQ(e.verdicts.size(), 1u);
  EXPECT_EQ(e.verdicts[0].cause, SlowdownCause::kContention);
  EXPECT_TRUE(Unavailable(e.verdicts[0], "no --events file"));
}

TEST(ExplainRuns, HostSide) {
  const auto e = Explain(MakeSyntheticRun(Scenario::kHostSide));
  ASSERT_EQ(e.verdicts.size(), 1u);
  EXPECT_EQ(e.verdicts[0].cause, SlowdownCause::kHostSide);
  EXPECT_TRUE(Mentions(e.verdicts[0], "GPU underfed (30% utilization"));
}

TEST(ExplainRuns, Unexplained) {
  const auto run = MakeSyntheticRun(Scenario::kUnexplained);
  const auto e = Explain(run);
  ExpectOneWindowAtTheSlowStretch(e, run);
  const auto& v = e.verdicts[0];
  EXPECT_EQ(v.cause, SlowdownCause::kUnexplained);
  EXPECT_TRUE(v.also.empty());
  EXPECT_NE(EnglishText(v.advice).find("data loader"), std::string::npos);
  EXPECT_GE(v.readings.samples, 40u);  // 81 s at one sample per 2 s
}

TEST(ExplainRuns, NoGpuSamplesDoNotCrashAndSayWhatIsMissing) {
  const auto e = Explain(MakeSyntheticRun(Scenario::kNoGpu));
  EXPECT_EQ(e.profile.kind, PlatformKind::kNoGpu);
  ASSERT_EQ(e.verdicts.size(), 1u);
  EXPECT_EQ(e.verdicts[0].cause, SlowdownCause::kUnexplained);
  EXPECT_TRUE(Unavailable(e.verdicts[0], "platform none"));
  EXPECT_TRUE(Unavailable(e.verdicts[0], "utilization.gpu"));
}

TEST(ExplainRuns, GpuRulesOnEmptyGpuColumnsForcedToGb10) {
  // --platform gb10 on samples without GPU readings: every GPU test says it had no readings.
  const auto e = Explain(MakeSyntheticRun(Scenario::kNoGpu), PlatformKind::kGb10);
  ASSERT_EQ(e.verdicts.size(), 1u);
  EXPECT_EQ(e.source, PlatformSource::kFlag);
  EXPECT_EQ(e.verdicts[0].cause, SlowdownCause::kUnexplained);
  EXPECT_TRUE(Unavailable(e.verdicts[0], "clock event reasons: no readings"));
  EXPECT_TRUE(Unavailable(e.verdicts[0], "no SM clock readings"));
  EXPECT_TRUE(Unavailable(e.verdicts[0], "no power or temperature readings"));
}

TEST(ExplainRuns, WithoutSamplesEverythingIsUnavailable) {
  const auto e = Explain(MakeSyntheticRun(Scenario::kThermalPlateau), {}, /*with_samples=*/false);
  ASSERT_EQ(e.verdicts.size(), 1u);
  EXPECT_EQ(e.verdicts[0].cause, SlowdownCause::kUnexplained);
  EXPECT_TRUE(Unavailable(e.verdicts[0], "no --samples file"));
}

TEST(ExplainRuns, Gb10DetectedFromValuesWhenTheHeaderSaysNothing) {
  auto run = MakeSyntheticRun(Scenario::kClockCollapse, 300, 120, 200, 3.0);
  const std::string from = "device=\"NVIDIA GB10\"", to = "device=\"unknown\"";
  const size_t at = run.samples_csv.find(from);
  ASSERT_NE(at, std::string::npos) << run.samples_csv.substr(0, 200);
  run.samples_csv.replace(at, from.size(), to);
  const size_t p = run.samples_csv.find("platform=gb10");
  ASSERT_NE(p, std::string::npos);
  run.samples_csv.replace(p, 13, "platform=none");
  const auto e = Explain(run);
  EXPECT_EQ(e.profile.kind, PlatformKind::kGb10);
  EXPECT_EQ(e.source, PlatformSource::kValues);
  ASSERT_EQ(e.verdicts.size(), 1u);
  EXPECT_EQ(e.verdicts[0].cause, SlowdownCause::kClockCollapse);
}

TEST(ExplainRuns, EventLinesParseAndCountBadOnes) {
  const auto ev = ParseEventLines(
      "{\"type\":\"clock_collapse\",\"wall_time\":\"2026-11-29T10:00:00.000Z\",\"data\":{\"clocks_"
      "sm_mhz\":700}}\n"
      "\n"
      "not json\n"
      "{\"type\":\"start\",\"wall_time\":\"2026-11-29T10:00:01Z\",\"monotonic_s\":1.5}\n"
      "{\"type\":\"x\"}\n");
  ASSERT_EQ(ev.events.size(), 2u);
  EXPECT_EQ(ev.events[0].type, "clock_collapse");
  EXPECT_EQ(ev.events[0].data_json, "{\"clocks_sm_mhz\":700}");
  EXPECT_EQ(ev.events[1].data_json, "{}");
  EXPECT_EQ(ev.skipped_lines, 2u);
}

// explain reads the samples through ExplainSampleFilter, keeping only the rows its windows
// look at: the report is the same as with every row kept, for every scenario and platform,
// and the rows outside the windows are not held.
TEST(ExplainRuns, TheWindowsRowsAloneGiveTheSameReport) {
  const Scenario scenarios[] = {Scenario::kClean,       Scenario::kThermalPlateau,
                                Scenario::kThermalBit,  Scenario::kClockCollapse,
                                Scenario::kContention,  Scenario::kHostSide,
                                Scenario::kUnexplained, Scenario::kNoGpu};
  const std::optional<PlatformKind> platforms[] = {std::nullopt, PlatformKind::kDiscrete};
  TempDir dir("explain-filter");
  for (const Scenario scenario : scenarios) {
    for (const auto& forced : platforms) {
      const auto run = MakeSyntheticRun(scenario);
      WriteFile(dir / "s.csv", run.samples_csv);
      WriteFile(dir / "e.jsonl", run.events_jsonl);
      const auto records = ParseStepLog(run.log);
      const auto timings = StepTimes(records);
      const RecordedEvents events = ParseEventLines(run.events_jsonl);

      auto all = ReadSamplesCsv(dir / "s.csv");
      ASSERT_TRUE(all.ok());
      ExplainSampleFilter filter(timings);
      auto some = ReadSamplesCsv(dir / "s.csv", size_t{1} << 30,
                                 [&](const SampleSeries& series, const Sample& sample) {
                                   return filter.Keep(series, sample);
                                 });
      ASSERT_TRUE(some.ok());
      EXPECT_EQ(some->rows, all->rows);
      EXPECT_EQ(all->samples.size(), all->rows);

      ExplainRequest request;
      request.log_path = "train.log";
      request.samples_path = "s.csv";
      request.events = &events;
      request.forced_platform = forced;
      request.samples = &*all;
      const std::string expected =
          ExplainReportToJson(AnalyzeRun(request, records, timings)).dump();
      request.samples = &*some;
      request.sample_stats = &filter.stats();
      const std::string got = ExplainReportToJson(AnalyzeRun(request, records, timings)).dump();
      EXPECT_EQ(got, expected) << static_cast<int>(scenario);

      // Kept: exactly the rows some window's span holds, and no other.
      std::vector<SampleSpan> spans;
      for (const auto& w : FindSlowdowns(timings).windows)
        if (auto span = WindowSampleSpan(w, SampleIntervalSeconds(*all))) spans.push_back(*span);
      size_t in_spans = 0;
      for (const Sample& sample : all->samples) {
        in_spans += std::any_of(spans.begin(), spans.end(), [&](const SampleSpan& span) {
          return sample.time >= span.before && sample.time <= span.to;
        });
      }
      EXPECT_EQ(some->samples.size(), in_spans) << static_cast<int>(scenario);
      if (spans.empty()) {
        EXPECT_TRUE(some->samples.empty()) << static_cast<int>(scenario);
      } else {
        EXPECT_GT(some->samples.size(), 0u) << static_cast<int>(scenario);
        EXPECT_LT(some->samples.size(), all->samples.size()) << static_cast<int>(scenario);
      }
    }
  }
}

TEST(ExplainRuns, ProfileStatsPercentileIsTheRankOfTheSortedReadings) {
  std::map<uint32_t, uint64_t> counts;
  for (uint32_t v = 100; v >= 1; --v) ++counts[v];               // 1..100, once each
  EXPECT_EQ(SampleProfileStats::Percentile(counts, 0.95), 95u);  // index floor(0.95 * 99) = 94
  EXPECT_EQ(SampleProfileStats::Percentile(counts, 1.0), 100u);
  EXPECT_EQ(SampleProfileStats::Percentile(counts, 0.0), 1u);
  counts.clear();
  counts[2400] = 19;
  counts[700] = 1;  // 20 readings: index 18 of the sorted ones is 2400
  EXPECT_EQ(SampleProfileStats::Percentile(counts, 0.95), 2400u);
  EXPECT_EQ(SampleProfileStats::Percentile({}, 0.95), 0u);
}

}  // namespace
}  // namespace headroom
