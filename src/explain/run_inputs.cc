// Implementation notes: an events file is read line by line with nlohmann's non-throwing
// parser, so a torn last line (a power loss mid-write) or a foreign line is counted, not
// fatal. The discrete profile takes percentiles of the run itself because a samples file
// carries readings, not the device's limits.
#include "explain/run_inputs.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/bytes.h"

namespace headroom {
RecordedEvents ParseEventLines(std::string_view text) {
  RecordedEvents out;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    std::optional<WallTime> at;
    if (j.is_object() && j.contains("wall_time") && j["wall_time"].is_string()) {
      at = ParseIso8601WithOffset(j["wall_time"].get<std::string>());
    }
    if (!at || !j.contains("type") || !j["type"].is_string()) {
      ++out.skipped_lines;
      continue;
    }
    RecordedEvent e{j["type"].get<std::string>(), *at, "{}"};
    if (j.contains("data")) e.data_json = j["data"].dump();
    out.events.push_back(std::move(e));
  }
  return out;
}

std::string_view PlatformSourceName(PlatformSource source) {
  switch (source) {
    case PlatformSource::kFlag:
      return "flag";
    case PlatformSource::kHeader:
      return "header";
    case PlatformSource::kValues:
      return "values";
    case PlatformSource::kConfig:
      return "config";
    case PlatformSource::kNone:
      break;
  }
  return "none";
}

void SampleProfileStats::Add(const Sample& s) {
  if (s.sm_clock_mhz) ++clocks_mhz[*s.sm_clock_mhz];
  if (s.power_mw) ++power_mw[*s.power_mw];
  gpu = gpu || s.sm_clock_mhz || s.power_mw || s.temperature_c || s.gpu_utilization_pct;
  device_memory = device_memory || s.gpu_memory_total_bytes;
  if (s.mem_total_bytes) mem_total_bytes = s.mem_total_bytes;
}

uint32_t SampleProfileStats::Percentile(const std::map<uint32_t, uint64_t>& counts, double p) {
  uint64_t n = 0;
  for (const auto& [value, count] : counts) n += count;
  if (n == 0) return 0;
  const auto rank = static_cast<uint64_t>(p * static_cast<double>(n - 1));
  uint64_t seen = 0;
  for (const auto& [value, count] : counts) {
    seen += count;
    if (rank < seen) return value;
  }
  return counts.rbegin()->first;
}

PlatformProfile ProfileFromSamples(const SampleSeries& series, std::optional<PlatformKind> forced,
                                   PlatformSource* source) {
  SampleProfileStats stats;
  for (const Sample& s : series.samples) stats.Add(s);
  return ProfileFromSamples(series, stats, forced, source);
}

PlatformProfile ProfileFromSamples(const SampleSeries& series, const SampleProfileStats& stats,
                                   std::optional<PlatformKind> forced, PlatformSource* source) {
  const bool gpu = stats.gpu, device_memory = stats.device_memory;
  const std::optional<uint64_t>& mem_total = stats.mem_total_bytes;
  PlatformKind kind = PlatformKind::kNoGpu;
  *source = PlatformSource::kNone;
  const auto device = series.header.find("device");
  const auto platform = series.header.find("platform");
  if (forced) {
    kind = *forced;
    *source = PlatformSource::kFlag;
  } else if ((device != series.header.end() && IsGb10Name(device->second)) ||
             (platform != series.header.end() && platform->second == "gb10")) {
    kind = PlatformKind::kGb10;
    *source = PlatformSource::kHeader;
  } else if (gpu) {
    const bool pool = mem_total && *mem_total >= 115 * kGiB && *mem_total <= 135 * kGiB;
    kind = !device_memory && pool ? PlatformKind::kGb10 : PlatformKind::kDiscrete;
    *source = PlatformSource::kValues;
  }
  PlatformProfile p;
  p.kind = kind;
  if (device != series.header.end()) p.gpu_name = device->second;
  if (kind == PlatformKind::kGb10) {
    p.sustained_power_mw = kGb10SustainedPowerMw;
    p.rated_power_mw = kGb10RatedPowerMw;
    p.normal_sm_clock_mhz = kGb10NormalSmClockMhz;
    p.degraded_sm_clock_min_mhz = kGb10DegradedSmClockMinMhz;
    p.degraded_sm_clock_max_mhz = kGb10DegradedSmClockMaxMhz;
  } else if (kind != PlatformKind::kNoGpu) {
    const auto& clocks = stats.clocks_mhz;
    const auto& watts = stats.power_mw;
    if (!clocks.empty()) p.normal_sm_clock_mhz = SampleProfileStats::Percentile(clocks, 0.95);
    if (!watts.empty()) {
      p.sustained_power_mw = SampleProfileStats::Percentile(watts, 0.95);
      p.rated_power_mw = SampleProfileStats::Percentile(watts, 1.0);
    }
  }
  return p;
}

}  // namespace headroom
