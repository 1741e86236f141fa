// `headroom export`'s metrics: a snapshot of the machine (meminfo, PSI, NVML readings, the
// platform, the journal's guard counters) turned into metric families, and the families
// rendered in the Prometheus text format (0.0.4) or OpenMetrics 1.0.0.
//
// Names follow Prometheus conventions, with the unit as suffix (_bytes, _celsius, _watts,
// _joules_total, _hertz, _seconds_total, _ratio). Metric names and label names are never
// translated. docs/export.md lists every family.
//
// GB10 reports no GPU memory through NVML; there the GPU memory families are exported from
// /proc/meminfo with source="meminfo" (the pool is the GPU's memory), never as 0.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpu/gpu.h"
#include "gpu/platform.h"
#include "sys/meminfo.h"
#include "sys/psi.h"

namespace headroom {

struct MetricSample {
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
};

struct MetricFamily {
  std::string name;  // without _total for counters: "headroom_guard_kills"
  std::string help;
  std::string type;  // "gauge" or "counter"
  std::string unit;  // OpenMetrics UNIT ("bytes", "celsius", ...); "" when none
  std::vector<MetricSample> samples;
};

// What the journal says about guarded runs (all time).
struct GuardCounters {
  uint64_t guard_runs = 0;
  uint64_t guard_kills = 0;          // guard runs ended "killed-by-guard"
  uint64_t guard_warnings = 0;       // sum of the runs' recorded warnings
  uint64_t sweep_trials_killed = 0;  // sweep trials the guard killed
  uint64_t guardian_kills = 0;       // victims `headroom guardian` signalled
  uint64_t guardian_warnings = 0;    // its low-memory warnings
};

// A running guard (top/running_guards.h) as the exporter shows it, with its job's steps from
// the companion's step records when the guard recorded where they are (docs/export.md).
struct GuardedJob {
  int64_t run_id = 0;
  std::string kind;               // the run's kind: "guard", "watch" or "sweep"
  uint64_t kill_below_bytes = 0;  // the guard's kill level
  uint64_t warn_below_bytes = 0;  // its warning level; 0: none (a sweep's trials)
  std::optional<uint64_t> steps;  // step records of rank 0 (or no rank) read; nullopt: none known
  std::optional<double> last_step_wall_s;  // the newest such record's Unix time
};

struct ExportSnapshot {
  std::optional<MemInfo> meminfo;
  std::optional<Psi> psi;
  std::vector<GpuReading> gpus;
  PlatformProfile platform;
  std::string arch;
  std::string version;                 // headroom's
  std::optional<GuardCounters> guard;  // nullopt: no journal
  std::vector<GuardedJob> guarded;     // the guards running now on this host
  // Seconds each clock-event reason was seen active, per GPU index, accumulated by the
  // sampler at its own period (see ThrottleAccumulator).
  std::map<unsigned, std::map<std::string, double>> throttle_seconds;
  // Process names for NVML's pids (comm), when readable.
  std::map<uint32_t, std::string> process_names;
  // Also serve the dcgm-exporter names NVIDIA's DCGM Grafana dashboard reads (docs/export.md),
  // labelled with this host's name as dcgm-exporter's Hostname label.
  bool dcgm_names = true;
  std::string hostname;
  // The exporter's own work.
  uint64_t samples_total = 0;
  double last_sample_seconds = 0;
  std::map<int, uint64_t> requests_by_code;
};

// Adds one sampling period to the time of every slowdown reason active in `gpus`.
class ThrottleAccumulator {
 public:
  void Add(const std::vector<GpuReading>& gpus, double period_seconds);
  const std::map<unsigned, std::map<std::string, double>>& seconds() const { return seconds_; }

 private:
  std::map<unsigned, std::map<std::string, double>> seconds_;
};

std::vector<MetricFamily> BuildFamilies(const ExportSnapshot& s);

// The Prometheus text exposition format, version 0.0.4.
std::string RenderPrometheus(const std::vector<MetricFamily>& families);
// OpenMetrics 1.0.0 text: counters' samples end in _total, UNIT lines, "# EOF" at the end.
std::string RenderOpenMetrics(const std::vector<MetricFamily>& families);

inline constexpr std::string_view kPrometheusContentType =
    "text/plain; version=0.0.4; charset=utf-8";
inline constexpr std::string_view kOpenMetricsContentType =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

// A label value escaped for both formats: backslash, double quote and newline.
std::string EscapeLabelValue(std::string_view v);

}  // namespace headroom
