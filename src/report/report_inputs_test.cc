// AddReportLog and AddPlanEstimate: what `report` hands BuildReportData besides the samples
// (the page's data is checked whole by tests/cli/report_cli_test.cc and
// tests/report/report_data_test.py).
#include "report/report_inputs.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "model/catalog.h"

namespace headroom {
namespace {

TEST(ReportInputs, ALogWithoutStepsIsANoteAndEmptyAnalysis) {
  SampleSeries samples;
  ReportLog log = ReadReportLog("no steps here\n", nullptr);
  JudgeReportLog(log, samples, nullptr, {});
  EXPECT_TRUE(log.timings.empty());
  EXPECT_TRUE(log.verdicts.empty());
  ReportInputs in;
  AddReportLog(in, log, "train.log");
  ASSERT_EQ(in.notes.size(), 1u);
  EXPECT_EQ(in.notes[0], "train.log: no step series found (try --step-regex)");
  EXPECT_EQ(in.timings, &log.timings);
  EXPECT_EQ(in.verdicts, &log.verdicts);
  EXPECT_EQ(in.log_path, (std::filesystem::current_path() / "train.log").string());
}

TEST(ReportInputs, PlanEstimateIsThePlansPeakAndItsEnglishLine) {
  PlanInputs plan;
  plan.spec = *FindModel("llama-3.1-8b");
  plan.budget.budget_bytes = 100'000'000'000;
  ReportInputs in;
  AddPlanEstimate(in, plan);
  ASSERT_TRUE(in.plan_estimate_bytes);
  EXPECT_GT(*in.plan_estimate_bytes, 0u);
  EXPECT_TRUE(
      in.plan_text.starts_with("headroom plan: llama-3.1-8b lora, batch 1, seq 2048: peak "))
      << in.plan_text;
  EXPECT_TRUE(in.plan_text.ends_with(" GiB")) << in.plan_text;
}

TEST(ReportInputs, StartNamesTheSamplesAbsolutelyAndTitlesThePageByTheirFile) {
  SampleSeries samples;
  const WallTime when = std::chrono::system_clock::from_time_t(1'700'000'000);
  const ReportInputs in = StartReportInputs(samples, "runs/samples.csv", {}, "", when);
  EXPECT_EQ(in.samples, &samples);
  EXPECT_EQ(in.samples_path, (std::filesystem::current_path() / "runs/samples.csv").string());
  EXPECT_EQ(in.title, "samples.csv");
  EXPECT_EQ(in.generator, std::string("headroom ") + HEADROOM_VERSION);
  EXPECT_EQ(in.generated, when);
  EXPECT_EQ(StartReportInputs(samples, "s.csv", {}, "run 7", when).title, "run 7");
}

TEST(ReportInputs, EventsAreKeptAsTextAndParsed) {
  ReportInputs in;
  const std::string text =
      "{\"type\":\"oom_kill\",\"wall_time\":\"2026-12-01T10:00:00Z\"}\nnot json\n";
  const RecordedEvents events = AddReportEvents(in, text, "/tmp/events.jsonl");
  EXPECT_EQ(in.events_text, text);
  EXPECT_EQ(in.events_path, "/tmp/events.jsonl");
  EXPECT_EQ(events.events.size(), 1u);
  EXPECT_EQ(events.skipped_lines, 1u);
}

}  // namespace
}  // namespace headroom
