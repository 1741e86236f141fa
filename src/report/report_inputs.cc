#include "report/report_inputs.h"

#include <fmt/format.h>

#include "base/bytes.h"
#include "explain/explain_report.h"
#include "explain/step_log.h"
#include "plan/plan.h"

namespace headroom {

ReportLog AnalyzeReportLog(std::string_view log_text, const StepPattern* pattern,
                           const SampleSeries& samples, const RecordedEvents* events,
                           const PlatformProfile& profile) {
  ReportLog log;
  StepLogOptions options;
  options.pattern = pattern;
  log.timings = StepTimes(ParseStepLog(log_text, options));
  log.analysis = FindSlowdowns(log.timings);
  VerdictInputs vin;
  vin.profile = profile;
  vin.samples = &samples.samples;
  vin.sample_interval_s = SampleIntervalSeconds(samples);
  if (events) vin.events = &events->events;
  log.verdicts = ExplainWindows(log.analysis, vin);
  return log;
}

void AddReportLog(ReportInputs& in, const ReportLog& log, const std::string& log_path) {
  if (log.timings.empty())
    in.notes.push_back(fmt::format("{}: no step series found (try --step-regex)", log_path));
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
