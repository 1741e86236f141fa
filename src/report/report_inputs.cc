#include "report/report_inputs.h"

#include <fmt/format.h>

#include <filesystem>
#include <utility>

#include "base/bytes.h"
#include "base/version.h"
#include "explain/companion_steps.h"
#include "explain/explain_report.h"
#include "explain/step_log.h"
#include "plan/plan.h"

namespace headroom {

ReportInputs StartReportInputs(const SampleSeries& samples, const std::string& samples_path,
                               const PlatformProfile& profile, const std::string& title,
                               WallTime generated) {
  ReportInputs in;
  in.samples = &samples;
  in.samples_path = std::filesystem::absolute(samples_path).string();
  in.profile = profile;
  in.title = title.empty() ? std::filesystem::path(samples_path).filename().string() : title;
  in.generator = fmt::format("headroom {}", HeadroomVersion());
  in.generated = generated;
  return in;
}

RecordedEvents AddReportEvents(ReportInputs& in, std::string events_text,
                               const std::string& events_path) {
  in.events_text = std::move(events_text);
  in.events_path = std::filesystem::absolute(events_path).string();
  return ParseEventLines(in.events_text);
}

ReportLog ReadReportLog(std::string_view log_text, const StepPattern* pattern) {
  ReportLog log;
  StepLogOptions options;
  options.pattern = pattern;
  log.timings = StepTimes(ParseStepSource(log_text, options, &log.from_step_records));
  return log;
}

void JudgeReportLog(ReportLog& log, const SampleSeries& samples, const RecordedEvents* events,
                    const PlatformProfile& profile) {
  log.analysis = FindSlowdowns(log.timings);
  VerdictInputs vin;
  vin.profile = profile;
  vin.samples = &samples.samples;
  vin.sample_interval_s = SampleIntervalSeconds(samples);
  if (events) vin.events = &events->events;
  log.verdicts = ExplainWindows(log.analysis, vin);
}

void AddReportLog(ReportInputs& in, const ReportLog& log, const std::string& log_path) {
  in.log_path = std::filesystem::absolute(log_path).string();
  if (log.timings.empty())
    in.notes.push_back(fmt::format("{}: no step series found (try --step-regex)", log_path));
  if (log.from_step_records) {
    in.notes.push_back(fmt::format(
        "{}: steps from the companion's step records (exact step times, no log scraping)",
        log_path));
  }
  in.timings = &log.timings;
  in.analysis = &log.analysis;
  in.verdicts = &log.verdicts;
}

void AddPlanEstimate(ReportInputs& in, const PlanInputs& plan_inputs) {
  const PlanResult plan = MakePlan(plan_inputs);
  in.plan_estimate_bytes = plan.footprint.peak_bytes();
  in.plan_text = fmt::format("headroom plan: {} {}, batch {}, seq {}: peak {}", plan.spec.name,
                             Name(plan.workload.method), plan.workload.batch, plan.workload.seq,
                             FormatGiB(plan.footprint.peak_bytes()));
}

}  // namespace headroom
