// One `explain` analysis, gathered once for both outputs: the log's step series, its
// slowdown windows, the platform the samples are judged by and a verdict per window
// (explain/verdict.h); and its JSON document (schema_version 1, docs/explain.md), an English
// renderer (messages through EnglishText). The terminal's table is drawn in cli/.
//
// Nothing here reads files: the caller reads the log, the samples and the events and hands
// them in, so a bad path is reported before any analysis.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/message.h"
#include "explain/run_inputs.h"
#include "explain/slowdown.h"
#include "explain/step_record.h"
#include "explain/step_times.h"
#include "explain/verdict.h"
#include "gpu/platform.h"
#include "samples/samples_csv.h"

namespace headroom {

inline constexpr int kExplainSchemaVersion = 1;

// What an analysis is asked, besides the step series: the files it was given (paths for the
// report; null when not given) and how the platform is chosen.
struct ExplainRequest {
  std::string log_path, samples_path, events_path;
  const SampleSeries* samples = nullptr;
  const RecordedEvents* events = nullptr;
  // --platform or [platform] kind; nullopt: detect from the samples.
  std::optional<PlatformKind> forced_platform;
  bool platform_from_config = false;  // forced_platform came from the configuration
  // [platform] sustained_power_w and rated_power_w (the kind is forced_platform's).
  PlatformOverride power;
  // The stats of all the samples' rows when `samples` holds only some of them (read through
  // ExplainSampleFilter); null: `samples` holds every row.
  const SampleProfileStats* sample_stats = nullptr;
};

// Everything the report shows.
struct ExplainReport {
  std::string log_path, samples_path, events_path;
  std::string format;        // of the primary stream's first record
  std::string timing;        // the most common timing source
  bool local_times = false;  // the log's own stamps had no zone
  size_t records = 0;
  const SampleSeries* samples = nullptr;
  const RecordedEvents* events = nullptr;
  PlatformProfile profile;
  PlatformSource platform_source = PlatformSource::kNone;
  SlowdownThresholds thresholds;
  SlowdownAnalysis analysis;
  std::vector<WindowVerdict> verdicts;  // parallel to analysis.windows
  std::vector<Message> notes;
};

// The rows of a samples file an analysis of `timings` reads, for ReadSamplesCsv's `keep`:
// those within some slowdown window's span (verdict.h, WindowSampleSpan); every row goes into
// the platform stats. So explain holds the rows of its windows, not the file.
class ExplainSampleFilter {
 public:
  explicit ExplainSampleFilter(const std::vector<StepTiming>& timings);
  bool Keep(const SampleSeries& series, const Sample& s);
  const SampleProfileStats& stats() const { return stats_; }

 private:
  std::vector<SlowdownWindow> windows_;
  std::optional<std::vector<SampleSpan>> spans_;  // made at the first row (the header is read)
  SampleProfileStats stats_;
};

// The sample interval in seconds, from the samples header's interval_ms; 0 when unknown.
double SampleIntervalSeconds(const SampleSeries& samples);

// A verdict for each of the analysis' windows, in order.
std::vector<WindowVerdict> ExplainWindows(const SlowdownAnalysis& analysis,
                                          const VerdictInputs& inputs);

// The analysis of `timings` (StepTimes of `records`, not empty) against the request's
// samples and events.
ExplainReport AnalyzeRun(const ExplainRequest& request, const std::vector<StepRecord>& records,
                         const std::vector<StepTiming>& timings);

// explain --json's document.
nlohmann::ordered_json ExplainReportToJson(const ExplainReport& report);

}  // namespace headroom
