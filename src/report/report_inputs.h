// What `report` draws besides the samples, computed here so the command only reads files:
// the log's step series with explain's slowdown windows and verdicts, and the plan's
// estimate with its line (English: the page's data is never translated).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/wall_time.h"
#include "explain/run_inputs.h"
#include "explain/slowdown.h"
#include "explain/step_pattern.h"
#include "explain/step_times.h"
#include "explain/verdict.h"
#include "gpu/platform.h"
#include "plan/plan_request.h"
#include "report/report_data.h"
#include "samples/samples_csv.h"

namespace headroom {

// The inputs' start: the samples and their file (absolute in the data), the profile they are
// judged by, the page's title (`title`, else the samples file's name), and what made the page
// when ("headroom 0.1.0", `generated`).
ReportInputs StartReportInputs(const SampleSeries& samples, const std::string& samples_path,
                               const PlatformProfile& profile, const std::string& title,
                               WallTime generated);

// The events file's text and path (absolute in the data) in `in`; its events, parsed, for the
// log's verdicts.
RecordedEvents AddReportEvents(ReportInputs& in, std::string events_text,
                               const std::string& events_path);

// The log's analysis; ReportInputs points into it, so it lives as long as they do.
struct ReportLog {
  std::vector<StepTiming> timings;
  SlowdownAnalysis analysis;
  std::vector<WindowVerdict> verdicts;  // parallel to analysis.windows
  bool from_step_records = false;       // the "log" was the companion's step records
};

// The step series of `log_text` (`pattern` null: the built-in formats; a step-records file of
// the companion is read as one, explain/companion_steps.h). Read before the samples, so that
// they keep only the rows the log's slowdown windows need (explain/explain_report.h
// ExplainSampleFilter over `timings`).
ReportLog ReadReportLog(std::string_view log_text, const StepPattern* pattern);

// The log's slowdown windows in `log` and a verdict for each from the samples (every row, or
// at least the rows the windows need) and events (null: none) read as `profile`.
void JudgeReportLog(ReportLog& log, const SampleSeries& samples, const RecordedEvents* events,
                    const PlatformProfile& profile);

// `in` pointed at `log` (timings, analysis, verdicts) and the log's path (absolute in the
// data), with a note when the log at `log_path` has no step series.
void AddReportLog(ReportInputs& in, const ReportLog& log, const std::string& log_path);

// The plan's peak for --plan-args and its line: "headroom plan: llama-3.1-8b qlora, batch 1,
// seq 2048: peak 9.81 GiB".
void AddPlanEstimate(ReportInputs& in, const PlanInputs& plan);

}  // namespace headroom
