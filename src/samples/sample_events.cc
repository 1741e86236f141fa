// Implementation notes: each detector keeps only what its condition needs (the last mask,
// a short window, a flag per episode), so Feed is O(window) and allocation-free apart from
// the events it returns. Readings that are n/a neither start nor end an episode: a missing
// power reading is not "low power".
#include "samples/sample_events.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/message.h"
#include "gpu/clock_events.h"

namespace headroom {
namespace {

constexpr uint64_t kGpuIdleBit = 0x1;

std::string Watts(uint32_t mw) { return fmt::format("{:.1f}", mw / 1000.0); }

}  // namespace

SampleEventDetector::SampleEventDetector(PlatformProfile profile, EventThresholds thresholds)
    : profile_(std::move(profile)), t_(thresholds) {}

std::vector<SampleEvent> SampleEventDetector::Feed(const Sample& s) {
  std::vector<SampleEvent> out;
  if (s.gpu_lost && !lost_) {
    out.push_back({"gpu_lost", s.time, Msg("the GPU fell off the bus (NVML: GPU is lost)"), "{}"});
  }
  lost_ = s.gpu_lost;
  Throttle(s, out);
  Plateau(s, out);
  Collapse(s, out);
  Memory(s, out);
  Processes(s, out);
  return out;
}

void SampleEventDetector::Throttle(const Sample& s, std::vector<SampleEvent>& out) {
  if (!s.clock_event_reasons) return;
  const uint64_t now = *s.clock_event_reasons & ~kGpuIdleBit;
  for (const auto& r : kClockEventReasons) {
    const bool was = reasons_ & r.bit, is = now & r.bit;
    if (was == is) continue;
    out.push_back({is ? "throttle_set" : "throttle_cleared", s.time,
                   is ? Msg("clock event reason {} set", ClockEventReasonWord(r.name))
                      : Msg("clock event reason {} cleared", ClockEventReasonWord(r.name)),
                   fmt::format(R"({{"reason":"{}","clocks_sm_mhz":{}}})", r.name,
                               s.sm_clock_mhz ? fmt::format("{}", *s.sm_clock_mhz) : "null")});
  }
  // Bits the table does not know, as one group.
  const uint64_t unknown_was = reasons_ & ~kClockEventReasonsKnownMask;
  const uint64_t unknown_is = now & ~kClockEventReasonsKnownMask;
  if (unknown_was != unknown_is) {
    const uint64_t bits = unknown_is ? unknown_is : unknown_was;
    out.push_back({unknown_is ? "throttle_set" : "throttle_cleared", s.time,
                   unknown_is ? Msg("clock event reason unknown_0x{:x} set", bits)
                              : Msg("clock event reason unknown_0x{:x} cleared", bits),
                   fmt::format(R"({{"reason":"unknown_0x{:x}"}})", bits)});
  }
  reasons_ = now;
}

void SampleEventDetector::Plateau(const Sample& s, std::vector<SampleEvent>& out) {
  if (!s.power_mw || !s.temperature_c || !profile_.sustained_power_mw) {
    window_.clear();
    plateau_ = false;
    return;
  }
  window_.emplace_back(*s.power_mw, *s.temperature_c);
  if (window_.size() > t_.plateau_samples) window_.erase(window_.begin());
  if (window_.size() < t_.plateau_samples) return;
  double mean = 0;
  for (const auto& [p, c] : window_) mean += p;
  mean /= static_cast<double>(window_.size());
  bool flat = mean >= t_.plateau_min_fraction * *profile_.sustained_power_mw;
  for (const auto& [p, c] : window_) flat = flat && std::abs(p - mean) <= t_.plateau_band * mean;
  const int rise = window_.back().second - window_.front().second;
  const bool on = flat && rise >= t_.plateau_min_rise_c;
  if (on && !plateau_) {
    out.push_back(
        {"power_plateau", s.time,
         Msg("power held at {} W (sustained figure {} W) while the GPU warmed {} C in {} samples",
             Watts(static_cast<uint32_t>(mean)), Watts(*profile_.sustained_power_mw), rise,
             window_.size()),
         fmt::format(R"({{"power_w":{:.2f},"sustained_power_w":{:.1f},"temperature_c":{},)"
                     R"("temperature_rise_c":{},"samples":{}}})",
                     mean / 1000, *profile_.sustained_power_mw / 1000.0, window_.back().second,
                     rise, window_.size())});
  }
  // Re-arm only when the power leaves the plateau; a pause in the rise is the same episode.
  if (!flat) plateau_ = false;
  if (on) plateau_ = true;
}

void SampleEventDetector::Collapse(const Sample& s, std::vector<SampleEvent>& out) {
  if (!s.sm_clock_mhz || !profile_.normal_sm_clock_mhz) return;
  const uint32_t clock = *s.sm_clock_mhz;
  const uint64_t reasons = s.clock_event_reasons.value_or(0);
  const bool low_clock = clock < t_.collapse_clock_fraction * *profile_.normal_sm_clock_mhz ||
                         InDegradedClockBand(profile_, clock);
  const bool low_power = s.power_mw && profile_.rated_power_mw &&
                         *s.power_mw < t_.collapse_max_power_fraction * *profile_.rated_power_mw;
  const bool busy =
      !(reasons & kGpuIdleBit) &&
      (!s.gpu_utilization_pct || *s.gpu_utilization_pct >= t_.collapse_min_utilization_pct);
  const bool on = low_clock && low_power && busy && !IsClockSlowdown(reasons);
  collapse_run_ = on ? collapse_run_ + 1 : 0;
  if (collapse_run_ >= t_.collapse_samples && !collapsed_) {
    collapsed_ = true;
    out.push_back(
        {"clock_collapse", s.time,
         InDegradedClockBand(profile_, clock)
             ? Msg("SM clock {} MHz against a normal {} MHz at {} W with no clock event "
                   "reason (GB10 degraded "
                   "band; cleared only by a full power-off)",
                   clock, *profile_.normal_sm_clock_mhz, Watts(*s.power_mw))
             : Msg("SM clock {} MHz against a normal {} MHz at {} W with no clock event reason",
                   clock, *profile_.normal_sm_clock_mhz, Watts(*s.power_mw)),
         fmt::format(R"({{"clocks_sm_mhz":{},"normal_sm_clock_mhz":{},"power_w":{},)"
                     R"("rated_power_w":{:.1f},"utilization_gpu_pct":{},"degraded_band":{}}})",
                     clock, *profile_.normal_sm_clock_mhz, Watts(*s.power_mw),
                     *profile_.rated_power_mw / 1000.0,
                     s.gpu_utilization_pct ? fmt::format("{}", *s.gpu_utilization_pct) : "null",
                     InDegradedClockBand(profile_, clock) ? "true" : "false")});
  } else if (collapsed_ && !low_clock) {
    collapsed_ = false;
    out.push_back({"clock_recovered", s.time, Msg("SM clock back to {} MHz", clock),
                   fmt::format(R"({{"clocks_sm_mhz":{}}})", clock)});
  }
}

void SampleEventDetector::Memory(const Sample& s, std::vector<SampleEvent>& out) {
  if (s.psi_some_avg10_pct) {
    const double psi = *s.psi_some_avg10_pct;
    if (!psi_high_ && psi >= t_.psi_some_avg10_pct) {
      psi_high_ = true;
      out.push_back(
          {"memory_pressure", s.time,
           Msg("memory pressure: PSI some avg10 {:.2f}% (threshold {:.0f}%)", psi,
               t_.psi_some_avg10_pct),
           fmt::format(
               R"({{"cause":"psi","psi_some_avg10_pct":{:.2f},"threshold_pct":{:.1f},)"
               R"("mem_available_bytes":{}}})",
               psi, t_.psi_some_avg10_pct,
               s.mem_available_bytes ? fmt::format("{}", *s.mem_available_bytes) : "null")});
    } else if (psi_high_ && psi < t_.psi_some_avg10_pct / 2) {
      psi_high_ = false;
    }
  }
  if (!s.mem_available_bytes) return;
  if (last_available_) {
    const auto [then, before] = *last_available_;
    const double dt = std::chrono::duration<double>(s.time - then).count();
    const double fell = static_cast<double>(before) - static_cast<double>(*s.mem_available_bytes);
    const bool fast = dt > 0 && fell >= static_cast<double>(t_.fall_min_bytes) &&
                      fell / dt >= t_.fall_bytes_per_s;
    if (fast && !falling_) {
      out.push_back(
          {"memory_pressure", s.time,
           Msg("MemAvailable fell {:.1f} GiB in {:.1f} s (to {:.1f} GiB)", fell / (1 << 30), dt,
               *s.mem_available_bytes / double(1 << 30)),
           fmt::format(R"({{"cause":"memavailable_fall","fell_bytes":{:.0f},"seconds":{:.3f},)"
                       R"("bytes_per_s":{:.0f},"mem_available_bytes":{}}})",
                       fell, dt, fell / dt, *s.mem_available_bytes)});
    }
    falling_ = fast;
  }
  last_available_ = std::make_pair(s.time, *s.mem_available_bytes);
}

void SampleEventDetector::Processes(const Sample& s, std::vector<SampleEvent>& out) {
  if (!s.gpu_pids) return;
  std::set<uint32_t> now(s.gpu_pids->begin(), s.gpu_pids->end());
  if (pids_) {
    for (uint32_t pid : now) {
      if (!pids_->count(pid)) {
        out.push_back({"gpu_process_started", s.time, Msg("process {} started using the GPU", pid),
                       fmt::format(R"({{"pid":{},"gpu_processes":{}}})", pid, now.size())});
      }
    }
    for (uint32_t pid : *pids_) {
      if (!now.count(pid)) {
        out.push_back({"gpu_process_ended", s.time, Msg("process {} no longer uses the GPU", pid),
                       fmt::format(R"({{"pid":{},"gpu_processes":{}}})", pid, now.size())});
      }
    }
  }
  pids_ = std::move(now);
}

std::string SampleEventJson(const SampleEvent& e) {
  return fmt::format(R"({{"type":"{}","wall_time":"{}","data":{}}})", e.type,
                     FormatUtcIso8601(e.time), e.data) +
         "\n";
}

}  // namespace headroom
