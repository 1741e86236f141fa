#include "report/report_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "base/message.h"
#include "gpu/clock_events.h"

namespace headroom {
namespace {

using Json = nlohmann::ordered_json;

double Seconds(WallTime a, WallTime b) { return std::chrono::duration<double>(a - b).count(); }

double Round3(double v) { return std::round(v * 1000) / 1000; }

Json Num(double v, bool integer) {
  if (!std::isfinite(v)) return nullptr;
  if (integer) return static_cast<int64_t>(std::llround(v));
  return std::round(v * 1000) / 1000;
}

template <typename T>
Json Opt(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

// "+h:mm:ss" of a time relative to the start.
std::string Offset(double t) {
  const int64_t s = static_cast<int64_t>(std::max(0.0, t));
  return fmt::format("+{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
}

std::string GiB(double bytes) {
  return fmt::format("{:.2f} GiB", bytes / static_cast<double>(1ULL << 30));
}

// The guard's and watch's event lines, mapped to the page's kinds (docs/report-data.md).
struct EventMapper {
  double duration = 0;
  WallTime start{};
  Json events = Json::array();
  std::map<std::string, double> open_throttle;
  std::optional<double> open_collapse;
  std::string collapse_text;
  std::map<int64_t, double> open_pids;
  std::optional<uint64_t> kill_level, warn_level;
  size_t skipped = 0;

  double Clamp(double t) const { return std::clamp(t, 0.0, duration); }
  void Add(double t, std::optional<double> end, const std::string& kind, const std::string& text,
           const std::string& reason = "") {
    Json e = {{"t", Round3(Clamp(t))},
              {"end_t", end ? Json(Round3(Clamp(*end))) : Json(nullptr)},
              {"kind", kind},
              {"text", text.substr(0, 300)}};
    if (!reason.empty()) e["reason"] = reason;
    events.push_back(std::move(e));
  }

  void Line(const nlohmann::json& j) {
    if (!j.is_object() || !j.contains("type") || !j["type"].is_string() ||
        !j.contains("wall_time") || !j["wall_time"].is_string()) {
      ++skipped;
      return;
    }
    const auto at = ParseIso8601WithOffset(j["wall_time"].get<std::string>());
    if (!at) {
      ++skipped;
      return;
    }
    const double t = Seconds(*at, start);
    const std::string type = j["type"];
    // watch puts its fields under "data"; the guard writes them beside "type".
    const nlohmann::json& d = j.contains("data") && j["data"].is_object() ? j["data"] : j;
    auto str = [&](const char* key) {
      return d.contains(key) && d[key].is_string() ? d[key].get<std::string>() : "";
    };
    auto num = [&](const char* key) -> std::optional<double> {
      return d.contains(key) && d[key].is_number() ? std::optional(d[key].get<double>())
                                                   : std::nullopt;
    };
    if (type == "throttle_set") {
      open_throttle.try_emplace(str("reason"), t);
    } else if (type == "throttle_cleared") {
      const std::string reason = str("reason");
      auto it = open_throttle.find(reason);
      const double from = it != open_throttle.end() ? it->second : t;
      if (it != open_throttle.end()) open_throttle.erase(it);
      Add(from, t, "throttle", fmt::format("clock event reason {} set", reason), reason);
    } else if (type == "clock_collapse") {
      if (!open_collapse) open_collapse = t;
      collapse_text =
          num("clocks_sm_mhz")
              ? fmt::format("SM clock collapsed to {:.0f} MHz with no clock event reason",
                            *num("clocks_sm_mhz"))
              : "SM clock collapsed with no clock event reason";
    } else if (type == "clock_recovered") {
      Add(open_collapse.value_or(t), t, "clock_collapse",
          collapse_text.empty() ? "SM clock collapsed" : collapse_text);
      open_collapse.reset();
    } else if (type == "power_plateau") {
      Add(t, std::nullopt, "power_plateau",
          num("power_w") ? fmt::format("power held flat near {:.1f} W", *num("power_w"))
                         : "power held flat");
    } else if (type == "gpu_lost") {
      Add(t, std::nullopt, "gpu_lost", "the GPU fell off the bus (NVML: GPU is lost)");
    } else if (type == "gpu_process_started") {
      if (auto pid = num("pid")) open_pids.try_emplace(static_cast<int64_t>(*pid), t);
    } else if (type == "gpu_process_ended") {
      const int64_t pid = static_cast<int64_t>(num("pid").value_or(-1));
      auto it = open_pids.find(pid);
      const double from = it != open_pids.end() ? it->second : t;
      if (it != open_pids.end()) open_pids.erase(it);
      Add(from, t, "contention", fmt::format("process {} used the GPU", pid));
    } else if (type == "memory_pressure" || type == "pressure") {
      Add(t, std::nullopt, "memory_pressure",
          num("stall_ms_per_s")
              ? fmt::format("memory pressure: {:.0f} ms stalled per s", *num("stall_ms_per_s"))
          : num("psi_some_avg10_pct")
              ? fmt::format("memory pressure: PSI some avg10 {:.1f} %", *num("psi_some_avg10_pct"))
              : "memory pressure");
    } else if (type == "warn") {
      Add(t, std::nullopt, "guard_warn",
          num("available_bytes") ? fmt::format("guard: MemAvailable {} below the warning level",
                                               GiB(*num("available_bytes")))
                                 : "guard: low memory warning");
    } else if (type == "trigger") {
      Add(t, std::nullopt, "guard_kill",
          fmt::format(
              "guard killed the job: {}{}", str("reason").empty() ? "low memory" : str("reason"),
              num("available_bytes") ? ", MemAvailable " + GiB(*num("available_bytes")) : ""));
    } else {
      if (type == "start") {
        if (auto k = num("kill_below_bytes")) kill_level = static_cast<uint64_t>(*k);
        if (auto w = num("warn_below_bytes")) warn_level = static_cast<uint64_t>(*w);
      }
      Add(t, std::nullopt, type.substr(0, 40), "guard: " + type);
    }
  }

  void Close() {
    for (const auto& [reason, from] : open_throttle) {
      Add(from, duration, "throttle",
          fmt::format("clock event reason {} set (still set at the end)", reason), reason);
    }
    if (open_collapse)
      Add(*open_collapse, duration, "clock_collapse", collapse_text + " (still at the end)");
    for (const auto& [pid, from] : open_pids)
      Add(from, duration, "contention", fmt::format("process {} used the GPU", pid));
  }
};

}  // namespace

void Bucketer::Push(double t, std::optional<double> lo, std::optional<double> hi,
                    std::optional<double> mean) {
  t_.push_back(Round3(t));
  min_.push_back(lo ? Num(*lo, integers_) : Json(nullptr));
  max_.push_back(hi ? Num(*hi, integers_) : Json(nullptr));
  mean_.push_back(mean ? Num(*mean, integers_) : Json(nullptr));
}

void Bucketer::Flush() {
  if (count_ > 0) Push(sum_t_ / count_, lo_, hi_, sum_v_ / count_);
  count_ = 0;
}

int64_t Bucketer::BucketOf(double t) const {
  const int64_t last =
      std::max<int64_t>(0, static_cast<int64_t>(std::ceil(duration_s_ / bucket_s_)) - 1);
  return std::min(static_cast<int64_t>(std::floor(t / bucket_s_)), last);
}

void Bucketer::Mark(double t) {
  Flush();
  if (prev_t_) Push(t, std::nullopt, std::nullopt, std::nullopt);
  bucket_.reset();
}

void Bucketer::Break(double t) {
  // A restart inside the bucket being filled is merged into it, as a short gap is (Add).
  if (bucket_ && std::isfinite(t) && BucketOf(t) == *bucket_) return;
  Mark(t);
}

void Bucketer::Add(double t, double v) {
  if (!std::isfinite(v)) return;
  const int64_t b = BucketOf(t);
  // A gap no longer than a bucket is not drawn: the page shows buckets, and a break per
  // reading let rows spaced wider than gap_s grow the page with the rows (276 MB
  // from a 100 MB CSV). A break now leaves a bucket empty, so a series holds at most two
  // entries per bucket.
  if (prev_t_ && t - *prev_t_ > std::max(gap_s_, bucket_s_)) Mark((*prev_t_ + t) / 2);
  prev_t_ = t;
  if (!bucket_ || b != *bucket_) {
    Flush();
    bucket_ = b;
    lo_ = hi_ = v;
  }
  ++count_;
  ++readings_;
  sum_t_ = (count_ == 1 ? 0 : sum_t_) + t;
  lo_ = std::min(lo_, v);
  hi_ = std::max(hi_, v);
  sum_v_ = (count_ == 1 ? 0 : sum_v_) + v;
}

Json Bucketer::Finish() {
  Flush();
  return Json{{"t", t_}, {"min", min_}, {"max", max_}, {"mean", mean_}};
}

// A named namespace, not an anonymous one: ReportSamplePass::Impl, a class with linkage,
// holds the axis and the pass (g++'s -Wsubobject-linkage, in the unity build).
namespace report_pass {

// The time axis every series shares: the run's start and length, the sampling interval (the
// header's interval_ms, else the mean spacing, else 1 s) and the buckets the page draws.
struct TimeAxis {
  WallTime start{};
  double duration_s = 0;
  double interval_s = 1;
  double bucket_s = 1;
  double gap_s = 3;  // a longer pause between rows breaks the line
  size_t buckets = 1;

  double At(WallTime t) const { return Seconds(t, start); }
  Bucketer NewBucketer(bool integers) const {
    return Bucketer(duration_s, bucket_s, gap_s, integers);
  }
};

TimeAxis MakeTimeAxis(const SampleSeries& head, const SamplesExtent& extent) {
  TimeAxis axis;
  if (!extent.first || !extent.last) return axis;
  axis.start = *extent.first;
  axis.duration_s = std::max(0.0, Seconds(*extent.last, axis.start));
  double interval = 0;
  if (auto it = head.header.find("interval_ms"); it != head.header.end())
    interval = std::atof(it->second.c_str()) / 1000;
  if (!(interval > 0) && extent.rows > 1)
    interval = axis.duration_s / static_cast<double>(extent.rows - 1);
  if (!(interval > 0)) interval = 1;
  axis.interval_s = interval;
  axis.bucket_s = std::max(interval, axis.duration_s / static_cast<double>(kReportBuckets));
  axis.gap_s = 3 * interval;
  axis.buckets = static_cast<size_t>(std::max(1.0, std::ceil(axis.duration_s / axis.bucket_s)));
  return axis;
}

// One pass over the samples: the drawn series (bucketed) and the summary's figures (over
// every row).
class SamplePass {
 public:
  SamplePass(const SampleSeries& s, const TimeAxis& axis)
      : axis_(axis),
        used_(axis.NewBucketer(true)),
        avail_(axis.NewBucketer(true)),
        cached_(axis.NewBucketer(true)),
        gpu_mem_(axis.NewBucketer(true)),
        swap_(axis.NewBucketer(true)),
        power_(axis.NewBucketer(false)),
        sys_power_(axis.NewBucketer(false)),
        temp_(axis.NewBucketer(false)),
        sensor_(axis.NewBucketer(false)),
        clock_(axis.NewBucketer(false)) {
    // Extra columns the page uses: the box's power and the hottest sensor.
    for (size_t i = 0; i < s.extra_columns.size(); ++i) {
      const auto& c = s.extra_columns[i];
      if (c.unit == "W" && c.name.starts_with("hwmon.spbm.") &&
          c.name.find("sys_total") != std::string::npos)
        system_power_column_ = i;
      if (c.unit == "C") temp_columns_.push_back(i);
    }
  }

  void Add(const Sample& row) {
    const double t = axis_.At(row.time);
    AddMemory(row, t);
    AddPower(row, t);
    if (row.temperature_c) {
      temp_.Add(t, *row.temperature_c);
      if (!peak_temp_ || *row.temperature_c > *peak_temp_)
        peak_temp_ = *row.temperature_c, peak_temp_t_ = t;
    }
    if (row.sm_clock_mhz) clock_.Add(t, *row.sm_clock_mhz);
    if (row.clock_event_reasons) {
      any_reasons_ = true;
      for (const auto& name : DecodeClockEventReasons(*row.clock_event_reasons)) {
        if (name != "gpu_idle") throttled_[name] += axis_.interval_s;
      }
    }
    std::optional<double> hottest;
    for (size_t i : temp_columns_) {
      if (i < row.extra.size() && row.extra[i] && (!hottest || *row.extra[i] > *hottest))
        hottest = row.extra[i];
    }
    if (hottest) sensor_.Add(t, *hottest);
  }

  // The drawn series, in the page's order (docs/report-data.md). Each bucketer is finished on
  // a copy (a few thousand entries), so the pass stays as it was.
  Json Series() const {
    Json series = Json::object();
    auto put = [&](const char* name, const Bucketer& b) {
      if (b.readings() > 0) series[name] = Bucketer(b).Finish();
    };
    put("mem_used_bytes", used_);
    put("mem_available_bytes", avail_);
    put("mem_cached_bytes", cached_);
    put("gpu_mem_used_bytes", gpu_mem_);
    if (any_swap_) put("swap_used_bytes", swap_);
    put("gpu_power_w", power_);
    put("system_power_w", sys_power_);
    put("gpu_temp_c", temp_);
    put("max_sensor_temp_c", sensor_);
    put("sm_clock_mhz", clock_);
    return series;
  }

  Json Summary(double clock_collapse_s, std::optional<int64_t> steps) const {
    Json throttled = nullptr;
    if (any_reasons_) {
      throttled = Json::object();
      for (const auto& [reason, secs] : throttled_) throttled[reason] = Round3(secs);
    }
    // The GPU's energy counter where it has one, else the power readings integrated.
    std::optional<double> gpu_energy;
    if (first_energy_ && last_energy_ && *last_energy_ >= *first_energy_)
      gpu_energy = (*last_energy_ - *first_energy_) / 1000.0;
    else if (power_n_ > 1)
      gpu_energy = power_energy_;
    auto at = [](const std::optional<double>& t) { return t ? Json(Round3(*t)) : Json(nullptr); };
    auto bytes = [](const std::optional<double>& b) {
      return b ? Json(static_cast<int64_t>(*b)) : Json(nullptr);
    };
    return Json{
        {"peak_used_bytes", bytes(peak_used_)},
        {"peak_used_t", at(peak_used_t_)},
        {"min_available_bytes", bytes(min_avail_)},
        {"min_available_t", at(min_avail_t_)},
        {"peak_job_bytes", nullptr},
        {"peak_job_source", nullptr},
        {"gpu_energy_j", at(gpu_energy)},
        {"system_energy_j", nullptr},
        {"mean_gpu_power_w", power_n_ ? Json(Round3(power_sum_ / power_n_)) : Json(nullptr)},
        {"peak_gpu_power_w", at(peak_power_)},
        {"peak_gpu_temp_c", Opt(peak_temp_)},
        {"peak_gpu_temp_t", at(peak_temp_t_)},
        {"throttled_s", throttled},
        {"clock_collapse_s", Round3(clock_collapse_s)},
        {"steps", steps ? Json(*steps) : Json(nullptr)}};
  }

 private:
  void AddMemory(const Sample& row, double t) {
    if (row.mem_total_bytes && row.mem_available_bytes) {
      const double u =
          static_cast<double>(*row.mem_total_bytes) - static_cast<double>(*row.mem_available_bytes);
      used_.Add(t, u);
      if (!peak_used_ || u > *peak_used_) peak_used_ = u, peak_used_t_ = t;
    }
    if (row.mem_available_bytes) {
      const double a = static_cast<double>(*row.mem_available_bytes);
      avail_.Add(t, a);
      if (!min_avail_ || a < *min_avail_) min_avail_ = a, min_avail_t_ = t;
    }
    if (row.mem_cached_bytes) cached_.Add(t, static_cast<double>(*row.mem_cached_bytes));
    if (row.gpu_memory_total_bytes && *row.gpu_memory_total_bytes > 0 &&
        row.gpu_memory_used_bytes) {
      gpu_mem_.Add(t, static_cast<double>(*row.gpu_memory_used_bytes));
    }
    if (row.swap_used_bytes) {
      swap_.Add(t, static_cast<double>(*row.swap_used_bytes));
      any_swap_ = any_swap_ || *row.swap_used_bytes > 0;
    }
  }

  void AddPower(const Sample& row, double t) {
    if (row.power_mw) {
      const double w = *row.power_mw / 1000.0;
      power_.Add(t, w);
      power_sum_ += w;
      ++power_n_;
      if (!peak_power_ || w > *peak_power_) peak_power_ = w;
      if (prev_power_t_ && t - *prev_power_t_ <= axis_.gap_s)
        power_energy_ += (w + *prev_power_) / 2 * (t - *prev_power_t_);
      prev_power_t_ = t;
      prev_power_ = w;
    }
    if (row.energy_mj) {
      if (!first_energy_) first_energy_ = row.energy_mj;
      last_energy_ = row.energy_mj;
    }
    if (system_power_column_ && *system_power_column_ < row.extra.size() &&
        row.extra[*system_power_column_]) {
      sys_power_.Add(t, *row.extra[*system_power_column_]);
    }
  }

  const TimeAxis& axis_;
  std::optional<size_t> system_power_column_;
  std::vector<size_t> temp_columns_;
  Bucketer used_, avail_, cached_, gpu_mem_, swap_, power_, sys_power_, temp_, sensor_, clock_;
  bool any_swap_ = false;
  std::optional<double> peak_used_, peak_used_t_, min_avail_, min_avail_t_, peak_temp_,
      peak_temp_t_, peak_power_;
  double power_sum_ = 0, power_energy_ = 0;
  size_t power_n_ = 0;
  std::optional<uint64_t> first_energy_, last_energy_;
  std::optional<double> prev_power_t_, prev_power_;
  std::map<std::string, double> throttled_;
  bool any_reasons_ = false;
};

}  // namespace report_pass

using report_pass::MakeTimeAxis;
using report_pass::SamplePass;
using report_pass::TimeAxis;

// The pass owns its axis; SamplePass holds a reference to it (declared first, built first).
struct ReportSamplePass::Impl {
  Impl(const SampleSeries& head, const SamplesExtent& e)
      : extent(e), axis(MakeTimeAxis(head, e)), pass(head, axis) {}
  SamplesExtent extent;
  TimeAxis axis;
  SamplePass pass;
  size_t added = 0;
};

void SamplesExtent::Add(const Sample& row) {
  if (rows == 0) first = row.time, first_mem_total_bytes = row.mem_total_bytes;
  last = row.time;
  ++rows;
}

ReportSamplePass::ReportSamplePass(const SampleSeries& head, const SamplesExtent& extent)
    : impl_(std::make_unique<Impl>(head, extent)) {}

ReportSamplePass::~ReportSamplePass() = default;

void ReportSamplePass::Add(const Sample& row) {
  if (impl_->added >= impl_->extent.rows) return;  // written after the first pass
  ++impl_->added;
  impl_->pass.Add(row);
}

namespace {

// What the log adds: the step-rate series, explain's windows with their verdicts.
struct LogPart {
  Json slowdowns = nullptr;  // null without --log
  std::optional<double> baseline_rate;
  std::optional<int64_t> steps;
};

Json SlowdownJson(const SlowdownWindow& w, const WindowVerdict* v, const TimeAxis& axis) {
  Json evidence = Json::array(), also = Json::array(), unavailable = Json::array();
  std::string verdict = "unexplained", advice;
  if (v) {
    verdict = std::string(SlowdownCauseName(v->cause));
    advice = EnglishText(v->advice);
    for (auto c : v->also) also.push_back(std::string(SlowdownCauseName(c)));
    for (const auto& e : v->evidence) {
      const std::string text = EnglishText(e.text);
      evidence.push_back(e.time ? Offset(axis.At(*e.time)) + " " + text : text);
    }
    for (const auto& u : v->unavailable) unavailable.push_back(EnglishText(u));
  }
  return Json{{"t", Round3(std::clamp(axis.At(*w.start_time), 0.0, axis.duration_s))},
              {"end_t", Round3(std::clamp(axis.At(*w.end_time), 0.0, axis.duration_s))},
              {"first_step", w.first_step},
              {"last_step", w.last_step},
              {"factor", Round3(w.factor)},
              {"peak_factor", Round3(w.peak_factor)},
              {"verdict", verdict},
              {"also", also},
              {"evidence", evidence},
              {"unavailable", unavailable},
              {"advice", advice}};
}

// Adds "step_rate_per_s" to `series` and its note to `notes`.
LogPart ReadLogPart(const ReportInputs& in, const TimeAxis& axis, Json& series,
                    std::vector<std::string>& notes) {
  LogPart part;
  if (!in.timings) return part;
  Bucketer rate(axis.duration_s, axis.bucket_s, std::numeric_limits<double>::infinity(), false);
  std::optional<int> segment;
  size_t unaligned = 0;
  for (const auto& st : *in.timings) {
    if (!st.end_time) {
      ++unaligned;
      continue;
    }
    const double t = axis.At(*st.end_time);
    if (segment && st.segment != *segment) rate.Break(t);
    segment = st.segment;
    if (t < 0 || t > axis.duration_s) continue;  // outside the sampled time
    rate.Add(t, 1.0 / st.seconds_per_step);
  }
  if (rate.readings() > 0) series["step_rate_per_s"] = rate.Finish();
  if (unaligned > 0)
    notes.push_back(
        fmt::format("{} step intervals of the log have no time and are not drawn", unaligned));
  part.slowdowns = Json::array();
  if (!in.analysis) return part;
  part.steps = in.analysis->steps;
  if (in.analysis->baseline_seconds_per_step > 0)
    part.baseline_rate = 1.0 / in.analysis->baseline_seconds_per_step;
  for (size_t i = 0; i < in.analysis->windows.size(); ++i) {
    const auto& w = in.analysis->windows[i];
    if (!w.start_time || !w.end_time) continue;
    const WindowVerdict* v = in.verdicts && i < in.verdicts->size() ? &(*in.verdicts)[i] : nullptr;
    part.slowdowns.push_back(SlowdownJson(w, v, axis));
  }
  return part;
}

// The events file's lines (at most 200,000 counted), mapped; a skipped line is noted.
EventMapper ReadEvents(const ReportInputs& in, const TimeAxis& axis,
                       std::vector<std::string>& notes) {
  EventMapper events;
  events.duration = axis.duration_s;
  events.start = axis.start;
  if (in.events_text.empty()) return events;
  std::string_view text = in.events_text;
  size_t lines = 0;
  while (!text.empty() && lines < 200'000) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    ++lines;
    events.Line(nlohmann::json::parse(line, nullptr, false));
  }
  events.Close();
  if (events.skipped > 0)
    notes.push_back(fmt::format("{}: {} lines were not events and were skipped", in.events_path,
                                events.skipped));
  return events;
}

double ClockCollapseSeconds(const Json& events) {
  double collapse_s = 0;
  for (const auto& e : events) {
    if (e["kind"] == "clock_collapse" && !e["end_t"].is_null())
      collapse_s += e["end_t"].get<double>() - e["t"].get<double>();
  }
  return collapse_s;
}

Json PlatformJson(const PlatformProfile& p) {
  return Json{
      {"name", std::string(PlatformKindName(p.kind))},
      {"sustained_power_w",
       p.sustained_power_mw ? Json(*p.sustained_power_mw / 1000.0) : Json(nullptr)},
      {"rated_power_w", p.rated_power_mw ? Json(*p.rated_power_mw / 1000.0) : Json(nullptr)},
      {"normal_sm_clock_mhz", Opt(p.normal_sm_clock_mhz)},
      {"degraded_sm_clock_mhz",
       p.degraded_sm_clock_min_mhz && p.degraded_sm_clock_max_mhz
           ? Json::array({*p.degraded_sm_clock_min_mhz, *p.degraded_sm_clock_max_mhz})
           : Json(nullptr)}};
}

}  // namespace

Result<Json> BuildReportData(const ReportInputs& in) {
  // The page's data is data: explain's verdicts and evidence (made here, explain/verdict.h)
  // are message values, written in English (EnglishText) whatever the user's language.
  const SampleSeries& s = *in.samples;
  // Without a pass the series holds every row: the same pass over it, in memory.
  std::unique_ptr<ReportSamplePass> own;
  if (!in.pass) {
    SamplesExtent extent;
    for (const Sample& row : s.samples) extent.Add(row);
    own = std::make_unique<ReportSamplePass>(s, extent);
    for (const Sample& row : s.samples) own->Add(row);
  }
  const ReportSamplePass::Impl& drawn = (in.pass ? in.pass : own.get())->impl();
  if (drawn.added == 0) return Error{"the samples file has no rows"};
  const TimeAxis& axis = drawn.axis;
  const SamplePass& pass = drawn.pass;
  Json series = pass.Series();
  std::vector<std::string> notes = in.notes;
  const LogPart log = ReadLogPart(in, axis, series, notes);
  const EventMapper events = ReadEvents(in, axis, notes);
  if (s.skipped_rows > 0)
    notes.push_back(fmt::format("samples: {} rows skipped (malformed)", s.skipped_rows));
  if (s.torn_last_line)
    notes.push_back(
        "samples: the last line was cut short (the run was still writing, or power was lost)");

  auto header = [&](const char* key) -> Json {
    auto it = s.header.find(key);
    return it == s.header.end() || it->second.empty() || it->second == "none" ? Json(nullptr)
                                                                              : Json(it->second);
  };
  Json guard = nullptr;
  if (events.kill_level) {
    guard = {{"kill_level_bytes", *events.kill_level},
             {"warn_level_bytes", events.warn_level ? Json(*events.warn_level) : Json(nullptr)}};
  }
  Json plan = nullptr;
  if (in.plan_estimate_bytes)
    plan = {{"estimate_bytes", *in.plan_estimate_bytes}, {"text", in.plan_text}};
  auto path_or_null = [](const std::string& p) { return p.empty() ? Json(nullptr) : Json(p); };
  return Json{
      {"schema_version", 1},
      {"title", in.title.empty() ? Json(nullptr) : Json(in.title)},
      {"generator", in.generator},
      {"generated", FormatUtcIso8601(in.generated)},
      {"host", header("host")},
      {"device", header("device")},
      {"platform", PlatformJson(in.profile)},
      {"start", FormatUtcIso8601(axis.start)},
      {"duration_s", Round3(axis.duration_s)},
      {"sampling",
       {{"rows", drawn.added},
        {"interval_s", Round3(axis.interval_s)},
        {"buckets", axis.buckets},
        {"bucket_s", Round3(axis.bucket_s)},
        {"method", "minmax"}}},
      {"mem_total_bytes", Opt(drawn.extent.first_mem_total_bytes)},
      {"plan", plan},
      {"guard", guard},
      {"step_baseline_per_s", log.baseline_rate ? Json(Round3(*log.baseline_rate)) : Json(nullptr)},
      {"series", series},
      {"events", events.events},
      {"slowdowns", log.slowdowns},
      {"summary", pass.Summary(ClockCollapseSeconds(events.events), log.steps)},
      {"sources",
       {{"samples", in.samples_path},
        {"log", path_or_null(in.log_path)},
        {"events", path_or_null(in.events_path)}}},
      {"notes", notes}};
}

std::string EmbedJson(const Json& data) {
  const std::string text = data.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + 64);
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else if (c == '&')
      out += "\\u0026";
    else if (c == '\xe2' && i + 2 < text.size() && text[i + 1] == '\x80' &&
             (text[i + 2] == '\xa8' || text[i + 2] == '\xa9')) {
      out += text[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

Result<std::string> FillReportTemplate(std::string_view tmpl, const Json& data) {
  constexpr std::string_view kPlaceholder = "/*HEADROOM_DATA*/null";
  size_t found = std::string_view::npos;
  size_t hits = 0;
  size_t pos = 0;
  while (pos <= tmpl.size()) {
    const size_t end = tmpl.find('\n', pos);
    std::string_view line =
        tmpl.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line == kPlaceholder) {
      found = pos;
      ++hits;
    }
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  if (hits != 1)
    return Error{
        fmt::format("report template: expected one '{}' line, found {}", kPlaceholder, hits)};
  std::string out(tmpl.substr(0, found));
  out += EmbedJson(data);
  out += tmpl.substr(found + kPlaceholder.size());
  return out;
}

}  // namespace headroom
