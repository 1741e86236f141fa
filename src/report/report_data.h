// `headroom report`: the data object the report page draws (docs/report-data.md, schema
// version 1), built from watch's samples, the job's log (step rate and explain's slowdown
// windows) and the events file; and the page itself, the template with that object in it.
//
// The page draws at most kReportBuckets points per series: readings are bucketed by time and
// each bucket keeps its min, max and mean, so a spike shorter than a bucket still shows.
// The summary is computed over every row, not the buckets.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/wall_time.h"
#include "explain/run_inputs.h"
#include "explain/slowdown.h"
#include "explain/step_times.h"
#include "explain/verdict.h"
#include "gpu/platform.h"
#include "samples/samples_csv.h"

namespace headroom {

inline constexpr size_t kReportBuckets = 2000;

// Readings (t, v) into time buckets of bucket_s; each non-empty bucket gives the mean time of
// its readings and their min, max and mean. A gap between consecutive readings longer than
// gap_s and than a bucket writes one all-null entry (a break in the line) at its midpoint, so
// a series has at most two entries per bucket whatever the rows' spacing. `integers`: values
// are bytes, written as integers (the mean rounded).
class Bucketer {
 public:
  Bucketer(double duration_s, double bucket_s, double gap_s, bool integers)
      : duration_s_(duration_s), bucket_s_(bucket_s), gap_s_(gap_s), integers_(integers) {}
  void Add(double t, double v);
  // An explicit gap (a log restart); merged into the bucket being filled when t falls in it.
  void Break(double t);
  size_t readings() const { return readings_; }
  // {"t": [...], "min": [...], "max": [...], "mean": [...]}
  nlohmann::ordered_json Finish();

 private:
  int64_t BucketOf(double t) const;
  void Mark(double t);  // writes the break entry
  void Flush();
  void Push(double t, std::optional<double> lo, std::optional<double> hi,
            std::optional<double> mean);
  double duration_s_, bucket_s_, gap_s_;
  bool integers_;
  size_t readings_ = 0;
  std::optional<double> prev_t_;
  std::optional<int64_t> bucket_;
  size_t count_ = 0;
  double sum_t_ = 0, lo_ = 0, hi_ = 0, sum_v_ = 0;
  nlohmann::ordered_json t_ = nlohmann::ordered_json::array(),
                         min_ = nlohmann::ordered_json::array(),
                         max_ = nlohmann::ordered_json::array(),
                         mean_ = nlohmann::ordered_json::array();
};

// The samples' extent, gathered in a first pass over the file that keeps no row: what the
// time axis is made of.
struct SamplesExtent {
  std::optional<WallTime> first, last;  // the first and the last row's time, in file order
  size_t rows = 0;
  std::optional<uint64_t> first_mem_total_bytes;  // the first row's MemTotal
  void Add(const Sample& row);
};

// The samples' part of the page, gathered one row at a time in file order: each row is
// bucketed as it is read and the summary's figures are kept as running values, so memory is
// the buckets' (kReportBuckets per series), not the file's. `head` is the series as read so
// far (its header and extra columns complete, the first row not yet stored), `extent` that of
// a first pass over the same file. Rows past the extent's count (a file still being written
// between the two passes) are not drawn: the page shows what the first pass measured.
class ReportSamplePass {
 public:
  ReportSamplePass(const SampleSeries& head, const SamplesExtent& extent);
  ~ReportSamplePass();
  ReportSamplePass(const ReportSamplePass&) = delete;
  ReportSamplePass& operator=(const ReportSamplePass&) = delete;
  void Add(const Sample& row);
  struct Impl;  // report_data.cc
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

struct ReportInputs {
  // Required: the samples' header, notes, skipped and torn rows; and their rows, unless
  // `pass` has them (then `samples` may hold only the rows the log's verdicts need).
  const SampleSeries* samples = nullptr;
  const ReportSamplePass* pass = nullptr;  // every row, bucketed as read; null: samples' rows
  std::string samples_path;
  // The log's step intervals and explain's analysis; null without --log.
  const std::vector<StepTiming>* timings = nullptr;
  const SlowdownAnalysis* analysis = nullptr;
  const std::vector<WindowVerdict>* verdicts = nullptr;  // parallel to analysis->windows
  std::string log_path;
  // The events file's text; empty without --events.
  std::string events_text;
  std::string events_path;
  PlatformProfile profile;
  std::string title;
  std::optional<uint64_t> plan_estimate_bytes;
  std::string plan_text;
  std::string generator;  // "headroom 0.1.0"
  WallTime generated{};
  std::vector<std::string> notes;
};

// The data object, in English (messages rendered with EnglishText; `notes` and `plan_text`
// are taken as given). An error when the samples have no row with a time.
Result<nlohmann::ordered_json> BuildReportData(const ReportInputs& in);

// The JSON as the page embeds it: compact, with '<', '>', '&', U+2028 and U+2029 escaped as
// \uXXXX so nothing in a string can end the <script>.
std::string EmbedJson(const nlohmann::ordered_json& data);

// Replaces the template's one line "/*HEADROOM_DATA*/null" with the embedded data; an error
// when the template has no such line or more than one.
Result<std::string> FillReportTemplate(std::string_view tmpl, const nlohmann::ordered_json& data);

// The template compiled into the binary (share/report/report.html at build time).
std::string_view ReportTemplate();

}  // namespace headroom
