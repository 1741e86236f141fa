// AnalyzeRun and ExplainReportToJson on a literal JSON-lines log: the summary's fields, the
// platform's source, the notes and the document's keys (explain --json, docs/explain.md).
// The whole command on synthetic runs is in tests/cli/explain_cli_test.cc.
#include "explain/explain_report.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "explain/step_log.h"

namespace headroom {
namespace {

// 300 steps at 0.5 s, steps 121-200 at 1.5 s: one slowdown.
std::string SlowLog() {
  std::string log;
  double t = 1764410400.0;
  for (int step = 1; step <= 300; ++step) {
    t += step > 120 && step <= 200 ? 1.5 : 0.5;
    log += fmt::format("{{\"step\": {}, \"time\": {:.3f}, \"loss\": 1.0}}\n", step, t);
  }
  return log;
}

struct Analysed {
  std::vector<StepRecord> records;
  std::vector<StepTiming> timings;
};

Analysed Parse(const std::string& log) {
  Analysed a;
  a.records = ParseStepLog(log, {});
  a.timings = StepTimes(a.records);
  return a;
}

TEST(ExplainReport, FindsTheWindowAndJudgesItWithoutSamples) {
  const Analysed a = Parse(SlowLog());
  ASSERT_FALSE(a.timings.empty());
  ExplainRequest request;
  request.log_path = "train.log";
  const ExplainReport r = AnalyzeRun(request, a.records, a.timings);
  EXPECT_EQ(r.format, "jsonl");
  EXPECT_EQ(r.timing, "timestamps");
  EXPECT_EQ(r.records, 300u);
  EXPECT_FALSE(r.local_times);
  ASSERT_EQ(r.analysis.windows.size(), 1u);
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].cause, SlowdownCause::kUnexplained);
  EXPECT_EQ(r.platform_source, PlatformSource::kNone);
  EXPECT_TRUE(r.notes.empty());

  const auto j = ExplainReportToJson(r);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["log"]["path"], "train.log");
  EXPECT_EQ(j["log"]["format"], "jsonl");
  EXPECT_EQ(j["log"]["records"], 300);
  EXPECT_TRUE(j["samples"].is_null());
  EXPECT_TRUE(j["events"].is_null());
  ASSERT_EQ(j["windows"].size(), 1u);
  EXPECT_EQ(j["windows"][0]["verdict"], "unexplained");
  EXPECT_TRUE(j["windows"][0]["readings"]["power_w_mean"].is_null());
  EXPECT_NEAR(j["baseline"]["seconds_per_step"].get<double>(), 0.5, 1e-6);
  EXPECT_EQ(j["thresholds"]["slow_factor"], r.thresholds.slow_factor);
  EXPECT_EQ(j.begin().key(), "schema_version");
  EXPECT_EQ(j.back(), nlohmann::ordered_json::array());  // "notes", last
}

TEST(ExplainReport, ForcedPlatformFromTheConfigurationAndItsPower) {
  const Analysed a = Parse(SlowLog());
  ExplainRequest request;
  request.forced_platform = PlatformKind::kDiscrete;
  request.platform_from_config = true;
  request.power.sustained_power_mw = 250000;
  const ExplainReport r = AnalyzeRun(request, a.records, a.timings);
  EXPECT_EQ(r.profile.kind, PlatformKind::kDiscrete);
  EXPECT_EQ(r.platform_source, PlatformSource::kConfig);
  EXPECT_EQ(r.profile.sustained_power_mw.value_or(0), 250000u);
}

TEST(ExplainReport, NotesAreMessagesRenderedInEnglishInTheJson) {
  const Analysed a = Parse(SlowLog());
  SampleSeries samples;  // a header, no rows
  RecordedEvents events = ParseEventLines("not json\n{\"also\": \"not an event\"}\n");
  ASSERT_EQ(events.skipped_lines, 2u);
  ExplainRequest request;
  request.samples_path = "samples.csv";
  request.events_path = "events.jsonl";
  request.samples = &samples;
  request.events = &events;
  const ExplainReport r = AnalyzeRun(request, a.records, a.timings);
  ASSERT_EQ(r.notes.size(), 2u);
  const auto j = ExplainReportToJson(r);
  EXPECT_EQ(j["notes"][0], "the samples file has no rows");
  EXPECT_EQ(j["notes"][1], "2 lines of events.jsonl were not events and were skipped");
  EXPECT_EQ(j["samples"]["rows"], 0);
  EXPECT_EQ(j["events"]["skipped_lines"], 2);
}

TEST(ExplainReport, SampleIntervalFromTheHeader) {
  SampleSeries s;
  EXPECT_EQ(SampleIntervalSeconds(s), 0);
  s.header["interval_ms"] = "250";
  EXPECT_DOUBLE_EQ(SampleIntervalSeconds(s), 0.25);
}

}  // namespace
}  // namespace headroom
