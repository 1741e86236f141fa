// Implementation notes.
//  - The platform: --platform (or [platform] kind) overrides what the samples say; without
//    samples it is the forced kind or none. Its power figures come from the configuration
//    last, so a forced kind keeps the configured sustained and rated power.
//  - The JSON keys and their order are docs/explain.md's; programs read them.
#include "explain/explain_report.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "base/wall_time.h"

namespace headroom {
namespace {

using Json = nlohmann::ordered_json;

Json JsonTime(const std::optional<WallTime>& t) {
  return t ? Json(FormatUtcIso8601(*t)) : Json(nullptr);
}

template <typename T>
Json JsonOpt(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

// The most common timing source of the intervals.
StepTimingSource MostCommonSource(const std::vector<StepTiming>& timings) {
  std::map<StepTimingSource, size_t> sources;
  for (const auto& t : timings) ++sources[t.source];
  return std::max_element(sources.begin(), sources.end(),
                          [](const auto& x, const auto& y) { return x.second < y.second; })
      ->first;
}

Json SeriesJson(const SlowdownAnalysis& a) {
  Json series = Json::array();
  for (const auto& b : a.series) {
    series.push_back({{"first_step", b.first_step},
                      {"last_step", b.last_step},
                      {"start_time", JsonTime(b.start_time)},
                      {"end_time", JsonTime(b.end_time)},
                      {"seconds_per_step", b.seconds_per_step},
                      {"factor", b.factor}});
  }
  return series;
}

Json ReadingsJson(const WindowReadings& rd) {
  return {{"samples", rd.samples},
          {"power_w_mean", JsonOpt(rd.power_w_mean)},
          {"temperature_c_min", JsonOpt(rd.temperature_c_min)},
          {"temperature_c_max", JsonOpt(rd.temperature_c_max)},
          {"sm_clock_mhz_median", JsonOpt(rd.sm_clock_mhz_median)},
          {"gpu_utilization_pct_mean", JsonOpt(rd.gpu_utilization_pct_mean)},
          {"cpu_util_pct_mean", JsonOpt(rd.cpu_util_pct_mean)},
          {"psi_some_avg10_pct_max", JsonOpt(rd.psi_some_avg10_pct_max)},
          {"mem_available_change_bytes", JsonOpt(rd.mem_available_change_bytes)},
          {"clock_event_reasons", rd.reasons}};
}

Json WindowJson(const SlowdownWindow& w, const WindowVerdict& v) {
  Json also = Json::array(), evidence = Json::array();
  for (auto c : v.also) also.push_back(SlowdownCauseName(c));
  for (const auto& e : v.evidence)
    evidence.push_back({{"time", JsonTime(e.time)}, {"text", EnglishText(e.text)}});
  return {{"first_step", w.first_step},
          {"last_step", w.last_step},
          {"segment", w.segment},
          {"start_time", JsonTime(w.start_time)},
          {"end_time", JsonTime(w.end_time)},
          {"seconds", w.seconds},
          {"seconds_per_step", w.seconds_per_step},
          {"factor", w.factor},
          {"peak_factor", w.peak_factor},
          {"verdict", SlowdownCauseName(v.cause)},
          {"also", also},
          {"evidence", evidence},
          {"unavailable", EnglishTexts(v.unavailable)},
          {"ruled_out", EnglishTexts(v.ruled_out)},
          {"advice", EnglishText(v.advice)},
          {"readings", ReadingsJson(v.readings)}};
}

Json ThresholdsJson(const SlowdownThresholds& t) {
  return {{"slow_factor", t.slow_factor},
          {"min_intervals", t.min_intervals},
          {"min_steps", t.min_steps},
          {"max_gap_intervals", t.max_gap_intervals},
          {"warmup_intervals", t.warmup_intervals},
          {"baseline_intervals", t.baseline_intervals}};
}

}  // namespace

double SampleIntervalSeconds(const SampleSeries& samples) {
  const auto interval = samples.header.find("interval_ms");
  if (interval == samples.header.end()) return 0;
  return std::atof(interval->second.c_str()) / 1000;
}

ExplainSampleFilter::ExplainSampleFilter(const std::vector<StepTiming>& timings) {
  if (!timings.empty()) windows_ = FindSlowdowns(timings, SlowdownThresholds{}).windows;
}

bool ExplainSampleFilter::Keep(const SampleSeries& series, const Sample& s) {
  stats_.Add(s);
  if (!spans_) {
    spans_.emplace();
    const double interval_s = SampleIntervalSeconds(series);
    for (const SlowdownWindow& w : windows_)
      if (auto span = WindowSampleSpan(w, interval_s)) spans_->push_back(*span);
  }
  for (const SampleSpan& span : *spans_)
    if (s.time >= span.before && s.time <= span.to) return true;
  return false;
}

std::vector<WindowVerdict> ExplainWindows(const SlowdownAnalysis& analysis,
                                          const VerdictInputs& inputs) {
  std::vector<WindowVerdict> verdicts;
  for (const auto& w : analysis.windows) verdicts.push_back(ExplainWindow(w, inputs));
  return verdicts;
}

ExplainReport AnalyzeRun(const ExplainRequest& request, const std::vector<StepRecord>& records,
                         const std::vector<StepTiming>& timings) {
  ExplainReport r;
  r.log_path = request.log_path;
  r.samples_path = request.samples_path;
  r.events_path = request.events_path;
  r.records = records.size();
  const StepRecord& first = records[timings.front().record_index];
  r.format = std::string(StepLogFormatName(first.format));
  r.timing = std::string(StepTimingSourceName(MostCommonSource(timings)));
  r.local_times = first.time_source == StepTimeSource::kLineLocal;
  if (r.local_times) {
    r.notes.push_back(
        Msg("the log's timestamps have no zone and are read as UTC; if they are local "
            "time the samples are misaligned (watch --log stamps lines in UTC)"));
  }
  r.analysis = FindSlowdowns(timings, r.thresholds);

  VerdictInputs in;
  if (const SampleSeries* samples = request.samples) {
    r.samples = samples;
    r.profile = request.sample_stats
                    ? ProfileFromSamples(*samples, *request.sample_stats, request.forced_platform,
                                         &r.platform_source)
                    : ProfileFromSamples(*samples, request.forced_platform, &r.platform_source);
    in.samples = &samples->samples;
    in.sample_interval_s = SampleIntervalSeconds(*samples);
    if (samples->rows == 0) r.notes.push_back(Msg("the samples file has no rows"));
  } else if (request.forced_platform) {
    r.profile.kind = *request.forced_platform;
    r.platform_source = PlatformSource::kFlag;
  }
  if (request.platform_from_config && r.platform_source == PlatformSource::kFlag)
    r.platform_source = PlatformSource::kConfig;
  r.profile = ApplyPlatformOverride(std::move(r.profile), request.power);
  in.profile = r.profile;
  if (const RecordedEvents* events = request.events) {
    r.events = events;
    in.events = &events->events;
    if (events->skipped_lines) {
      r.notes.push_back(Msg("{} lines of {} were not events and were skipped",
                            events->skipped_lines, request.events_path));
    }
  }
  r.verdicts = ExplainWindows(r.analysis, in);
  return r;
}

nlohmann::ordered_json ExplainReportToJson(const ExplainReport& r) {
  Json log = {{"path", r.log_path},
              {"format", r.format},
              {"timing", r.timing},
              {"records", r.records},
              {"intervals", r.analysis.intervals},
              {"steps", r.analysis.steps},
              {"segments", r.analysis.segments}};
  Json samples = nullptr;
  if (r.samples) {
    samples = {{"path", r.samples_path},
               {"rows", r.samples->rows},
               {"skipped_rows", r.samples->skipped_rows},
               {"platform", PlatformKindName(r.profile.kind)},
               {"platform_source", PlatformSourceName(r.platform_source)}};
  }
  Json events = nullptr;
  if (r.events) {
    events = {{"path", r.events_path},
              {"count", r.events->events.size()},
              {"skipped_lines", r.events->skipped_lines}};
  }
  Json windows = Json::array();
  for (size_t i = 0; i < r.analysis.windows.size(); ++i)
    windows.push_back(WindowJson(r.analysis.windows[i], r.verdicts[i]));
  return {{"schema_version", kExplainSchemaVersion},
          {"log", log},
          {"samples", samples},
          {"events", events},
          {"baseline",
           {{"seconds_per_step", r.analysis.baseline_seconds_per_step},
            {"first_step", r.analysis.baseline_first_step},
            {"last_step", r.analysis.baseline_last_step}}},
          {"thresholds", ThresholdsJson(r.thresholds)},
          {"series", SeriesJson(r.analysis)},
          {"windows", windows},
          {"notes", EnglishTexts(r.notes)}};
}

}  // namespace headroom
