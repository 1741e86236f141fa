// Implementation notes: the window's samples are those stamped within it, widened by half
// the sampling interval on each side (with watch's default 30 s interval a 60 s window would
// otherwise hold one sample or none). Each test counts only the samples that have its
// readings: an empty field is "no reading", never 0 (docs/style.md rule 7), and a test with no
// readings at all says so in `unavailable` instead of failing quietly.
#include "explain/verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "base/message.h"
#include "explain/cause_timing.h"
#include "gpu/clock_events.h"

namespace headroom {
namespace {

// The bits the issue names as power or thermal: sw_power_cap, hw_slowdown,
// sw_thermal_slowdown, hw_thermal_slowdown, hw_power_brake_slowdown (gpu/clock_events.h).
constexpr uint64_t kPowerThermalBits = 0x04 | 0x08 | 0x20 | 0x40 | 0x80;
constexpr uint64_t kGpuIdleBit = 0x01;

WallTime Shift(WallTime t, double seconds) {
  return t + std::chrono::duration_cast<WallTime::duration>(std::chrono::duration<double>(seconds));
}

std::string Clock(WallTime t) { return FormatUtcIso8601(t); }

// Clock-event reason names, for people (gpu/clock_events.h).
Message JoinReasons(const std::vector<std::string>& names) {
  std::vector<Message> words;
  for (const auto& n : names) words.push_back(ClockEventReasonWord(n));
  return JoinMessages(words, ", ");
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1))];
}

struct Span {
  std::vector<const Sample*> window;  // the window's samples
  std::vector<const Sample*> before;  // one window length before it (temperature baseline)
};

class Judge {
 public:
  Judge(const SlowdownWindow& w, const VerdictInputs& in, const VerdictThresholds& t)
      : w_(w), in_(in), t_(t) {}

  WindowVerdict Run();

 private:
  bool ReasonBits();
  bool Collapse();
  bool Plateau();
  bool Contention();
  bool HostSide();
  void Readings();
  bool EventIn(std::string_view type, double lookback_s, const RecordedEvent** first) const;
  // Whether the cause's timing fits the window (explain/cause_timing.h): states the overlap
  // as evidence, and a mismatch in ruled_out. True when it cannot be timed.
  bool Timed(const Message& what, const std::function<std::optional<bool>(const Sample&)>& holds);
  void Add(std::optional<WallTime> at, Message text) {
    out_.evidence.push_back({at, std::move(text)});
  }

  const SlowdownWindow& w_;
  const VerdictInputs& in_;
  const VerdictThresholds& t_;
  Span span_;
  WindowVerdict out_;
};

bool Judge::EventIn(std::string_view type, double lookback_s, const RecordedEvent** first) const {
  if (!in_.events || !w_.start_time || !w_.end_time) return false;
  const WallTime from = Shift(*w_.start_time, -lookback_s);
  for (const auto& e : *in_.events) {
    if (e.type == type && e.time >= from && e.time <= *w_.end_time) {
      *first = &e;
      return true;
    }
  }
  return false;
}

bool Judge::ReasonBits() {
  size_t known = 0, set = 0;
  uint64_t seen = 0;
  std::optional<WallTime> first;
  for (const Sample* s : span_.window) {
    if (!s->clock_event_reasons) continue;
    ++known;
    const uint64_t bits = *s->clock_event_reasons & kPowerThermalBits;
    if (!bits) continue;
    ++set;
    seen |= bits;
    if (!first) first = s->time;
  }
  out_.readings.reasons = DecodeClockEventReasons(seen);
  bool matched = false;
  if (known == 0) {
    out_.unavailable.push_back(Msg("clock event reasons: no readings in the window"));
  } else if (static_cast<double>(set) >= t_.reason_min_share * static_cast<double>(known)) {
    Add(first, Msg("clock event reasons {} set in {} of {} samples",
                   JoinReasons(out_.readings.reasons), set, known));
    matched = true;
  }
  const RecordedEvent* e = nullptr;
  if (EventIn("throttle_set", 0, &e)) {
    // TRANSLATORS: "throttle_set" is an event type and {} its JSON data: keep both.
    Add(e->time, Msg("event throttle_set {}", e->data_json));
    matched = true;
  }
  return matched;
}

// Whether a sample shows the collapse: a slow clock while busy, at low power, with no bit.
// nullopt without a clock reading.
std::optional<bool> CollapsedIn(const Sample& s, const PlatformProfile& p,
                                const VerdictThresholds& t) {
  if (!s.sm_clock_mhz || !p.normal_sm_clock_mhz) return std::nullopt;
  const uint32_t mhz = *s.sm_clock_mhz;
  const bool slow =
      mhz < t.collapse_clock_fraction * *p.normal_sm_clock_mhz || InDegradedClockBand(p, mhz);
  const bool busy = (!s.gpu_utilization_pct || *s.gpu_utilization_pct >= t.busy_utilization_pct) &&
                    (!s.clock_event_reasons || !(*s.clock_event_reasons & kGpuIdleBit));
  const bool no_bit = !s.clock_event_reasons || !IsClockSlowdown(*s.clock_event_reasons);
  const bool low_power = !s.power_mw || !p.rated_power_mw ||
                         *s.power_mw < t.collapse_max_power_fraction * *p.rated_power_mw;
  return slow && busy && no_bit && low_power;
}

bool Judge::Timed(const Message& what,
                  const std::function<std::optional<bool>(const Sample&)>& holds) {
  if (!in_.samples || !w_.start_time || !w_.end_time) return true;
  CauseWindow cw{*w_.start_time, *w_.end_time, w_.recovered, in_.sample_interval_s,
                 t_.timing_tolerance_s};
  const auto timing = TimeCause(*in_.samples, holds, cw);
  if (!timing) return true;
  Add(Shift(*w_.start_time, timing->from_s), CauseOverlapText(what, *timing));
  if (timing->IsCause()) return true;
  // TRANSLATORS: {0} names a cause, {1} says how its timing differs from the slowdown's.
  out_.ruled_out.push_back(Msg("{0} is not the cause: {1}", what, CauseMismatchText(*timing)));
  return false;
}

bool Judge::Collapse() {
  const PlatformProfile& p = in_.profile;
  const RecordedEvent* e = nullptr;
  const bool event = EventIn("clock_collapse", 0, &e);
  if (event) Add(e->time, Msg("event clock_collapse {}", e->data_json));
  if (!p.normal_sm_clock_mhz) {
    out_.unavailable.push_back(Msg("clock collapse: no normal SM clock for this platform"));
    return event;
  }
  size_t known = 0, low = 0;
  std::optional<WallTime> first;
  for (const Sample* s : span_.window) {
    const auto collapsed = CollapsedIn(*s, p, t_);
    if (!collapsed) continue;
    ++known;
    if (*collapsed) {
      ++low;
      if (!first) first = s->time;
    }
  }
  if (known == 0) {
    out_.unavailable.push_back(Msg("clock collapse: no SM clock readings in the window"));
    return event;
  }
  if (static_cast<double>(low) < t_.collapse_min_share * static_cast<double>(known)) return event;
  // TRANSLATORS: {2} is empty or " (degraded band 500-850 MHz)".
  Add(first, Msg("SM clock {0:.0f} MHz (median) against a normal {1} MHz{2}, GPU busy, no "
                 "clock event bit, in {3} of "
                 "{4} samples",
                 out_.readings.sm_clock_mhz_median.value_or(0), *p.normal_sm_clock_mhz,
                 p.degraded_sm_clock_min_mhz && p.degraded_sm_clock_max_mhz
                     ? Msg(" (degraded band {}-{} MHz)", *p.degraded_sm_clock_min_mhz,
                           *p.degraded_sm_clock_max_mhz)
                     : Message(),
                 low, known));
  if (out_.readings.power_w_mean) {
    Add(first,
        Msg("power {:.1f} W, under {:.0f}% of the rated {:.0f} W", *out_.readings.power_w_mean,
            t_.collapse_max_power_fraction * 100, p.rated_power_mw.value_or(0) / 1000.0));
  }
  // The samples say the clock collapsed in the window; whether that is what slowed it is
  // when (an event in the window does not overrule the samples' timing).
  return Timed(Msg("the clock collapse"), [&](const Sample& s) { return CollapsedIn(s, p, t_); });
}

bool Judge::Plateau() {
  const RecordedEvent* e = nullptr;
  const bool event = EventIn("power_plateau", t_.event_lookback_s, &e);
  if (event) Add(e->time, Msg("event power_plateau {}", e->data_json));
  const auto& sustained = in_.profile.sustained_power_mw;
  if (!sustained) {
    out_.unavailable.push_back(Msg("power plateau: no sustained power figure for this platform"));
    return event;
  }
  std::vector<double> watts;
  std::optional<WallTime> first;
  for (const Sample* s : span_.window) {
    if (s->power_mw) watts.push_back(*s->power_mw / 1000.0);
    if (s->power_mw && !first) first = s->time;
  }
  if (watts.empty() || !out_.readings.temperature_c_max) {
    out_.unavailable.push_back(
        Msg("power plateau: no power or temperature readings in the window"));
    return event;
  }
  const double mean = *out_.readings.power_w_mean;
  const size_t flat = std::count_if(watts.begin(), watts.end(), [&](double w) {
    return std::abs(w - mean) <= t_.plateau_band * mean;
  });
  const int rise = *out_.readings.temperature_c_max - out_.readings.temperature_c_min.value_or(0);
  const bool near_cap = mean >= t_.plateau_min_fraction * (*sustained / 1000.0);
  if (!near_cap ||
      static_cast<double>(flat) < t_.plateau_min_share * static_cast<double>(watts.size()) ||
      rise < t_.temperature_rise_c) {
    return event;
  }
  Add(first, Msg("power flat at {:.1f} W ({} of {} samples within {:.0f}%), near the "
                 "sustained {:.0f} W, while "
                 "the temperature rose {} C ({} -> {} C)",
                 mean, flat, watts.size(), t_.plateau_band * 100, *sustained / 1000.0, rise,
                 *out_.readings.temperature_c_min, *out_.readings.temperature_c_max));
  return true;
}

bool Judge::Contention() {
  bool matched = false;
  const RecordedEvent* e = nullptr;
  if (!in_.events) {
    out_.unavailable.push_back(Msg("other GPU processes: no --events file"));
  } else {
    if (EventIn("gpu_process_started", t_.event_lookback_s, &e)) {
      Add(e->time, Msg("another process started using the GPU {}", e->data_json));
      matched = true;
    }
    if (EventIn("memory_pressure", t_.event_lookback_s, &e)) {
      Add(e->time, Msg("event memory_pressure {}", e->data_json));
      matched = true;
    }
  }
  const auto& r = out_.readings;
  if (r.psi_some_avg10_pct_max && *r.psi_some_avg10_pct_max >= t_.psi_some_avg10_pct) {
    std::optional<WallTime> at;
    for (const Sample* s : span_.window) {
      if (s->psi_some_avg10_pct && *s->psi_some_avg10_pct >= t_.psi_some_avg10_pct) {
        at = s->time;
        break;
      }
    }
    Add(at, Msg("memory pressure: PSI some avg10 up to {:.1f}% (threshold {:.0f}%)",
                *r.psi_some_avg10_pct_max, t_.psi_some_avg10_pct));
    matched = true;
  }
  if (r.mem_available_change_bytes &&
      -*r.mem_available_change_bytes >= static_cast<int64_t>(t_.mem_fall_bytes)) {
    Add(span_.window.front()->time,
        Msg("MemAvailable fell {:.1f} GiB across the window",
            -*r.mem_available_change_bytes / double(uint64_t{1} << 30)));
    matched = true;
  }
  if (!r.psi_some_avg10_pct_max && !r.mem_available_change_bytes) {
    out_.unavailable.push_back(
        Msg("memory pressure: no PSI or MemAvailable readings in the window"));
  }
  return matched;
}

bool Judge::HostSide() {
  const auto& r = out_.readings;
  if (!r.gpu_utilization_pct_mean || !r.cpu_util_pct_mean) {
    // TRANSLATORS: {} is a samples column: cpu.util or utilization.gpu.
    out_.unavailable.push_back(Msg("host-side: no {} readings in the window",
                                   r.gpu_utilization_pct_mean ? "cpu.util" : "utilization.gpu"));
    return false;
  }
  if (*r.gpu_utilization_pct_mean >= t_.underfed_utilization_pct) return false;
  const std::optional<WallTime> at = span_.window.front()->time;
  if (*r.cpu_util_pct_mean < t_.cpu_busy_pct) {
    // Not a verdict, but worth saying: the GPU waited on something that is not CPU time
    // (I/O, a single loader thread, a lock).
    Add(at, Msg("GPU underfed ({:.0f}% utilization) while the CPUs were only {:.0f}% busy",
                *r.gpu_utilization_pct_mean, *r.cpu_util_pct_mean));
    return false;
  }
  Add(at, Msg("GPU underfed ({:.0f}% utilization, under {:.0f}%) while the CPUs were {:.0f}% busy",
              *r.gpu_utilization_pct_mean, t_.underfed_utilization_pct, *r.cpu_util_pct_mean));
  return true;
}

void Judge::Readings() {
  WindowReadings& r = out_.readings;
  r.samples = span_.window.size();
  double power = 0, util = 0, cpu = 0;
  size_t n_power = 0, n_util = 0, n_cpu = 0;
  std::vector<double> clocks;
  std::optional<uint64_t> first_avail, last_avail;
  for (const Sample* s : span_.window) {
    if (s->power_mw) power += *s->power_mw / 1000.0, ++n_power;
    if (s->gpu_utilization_pct) util += *s->gpu_utilization_pct, ++n_util;
    if (s->cpu_util_pct) cpu += *s->cpu_util_pct, ++n_cpu;
    if (s->sm_clock_mhz) clocks.push_back(*s->sm_clock_mhz);
    if (s->temperature_c) {
      r.temperature_c_max =
          std::max(r.temperature_c_max.value_or(*s->temperature_c), *s->temperature_c);
    }
    if (s->psi_some_avg10_pct) {
      r.psi_some_avg10_pct_max =
          std::max(r.psi_some_avg10_pct_max.value_or(0), *s->psi_some_avg10_pct);
    }
    if (s->mem_available_bytes) {
      if (!first_avail) first_avail = s->mem_available_bytes;
      last_avail = s->mem_available_bytes;
    }
  }
  for (const auto* list : {&span_.before, &span_.window}) {
    for (const Sample* s : *list) {
      if (s->temperature_c) {
        r.temperature_c_min =
            std::min(r.temperature_c_min.value_or(*s->temperature_c), *s->temperature_c);
      }
    }
  }
  if (n_power) r.power_w_mean = power / static_cast<double>(n_power);
  if (n_util) r.gpu_utilization_pct_mean = util / static_cast<double>(n_util);
  if (n_cpu) r.cpu_util_pct_mean = cpu / static_cast<double>(n_cpu);
  if (!clocks.empty()) r.sm_clock_mhz_median = Percentile(clocks, 0.5);
  if (first_avail) {
    r.mem_available_change_bytes =
        static_cast<int64_t>(*last_avail) - static_cast<int64_t>(*first_avail);
  }
}

}  // namespace

std::optional<SampleSpan> WindowSampleSpan(const SlowdownWindow& w, double sample_interval_s) {
  if (!w.start_time || !w.end_time) return std::nullopt;
  const double pad = sample_interval_s / 2;
  const double length = std::chrono::duration<double>(*w.end_time - *w.start_time).count();
  return SampleSpan{Shift(*w.start_time, -length - pad), Shift(*w.start_time, -pad),
                    Shift(*w.end_time, pad)};
}

namespace {

WindowVerdict Judge::Run() {
  if (!w_.start_time || !w_.end_time) {
    out_.unavailable.push_back(
        Msg("all: the log has no wall-clock times, so samples and events cannot be lined up with "
            "the window (run the job under `headroom watch --log`, which stamps each line)"));
  } else if (!in_.samples) {
    out_.unavailable.push_back(Msg("samples: no --samples file"));
  } else {
    const auto [before, from, to] = *WindowSampleSpan(w_, in_.sample_interval_s);
    for (const Sample& s : *in_.samples) {
      if (s.time >= from && s.time <= to)
        span_.window.push_back(&s);
      else if (s.time >= before && s.time < from)
        span_.before.push_back(&s);
    }
    if (span_.window.empty()) {
      out_.unavailable.push_back(Msg("samples: none between {} and {}", Clock(from), Clock(to)));
    }
  }
  bool bits = false, collapse = false, plateau = false, contention = false, host = false;
  if (!span_.window.empty()) {
    Readings();
    if (in_.profile.kind == PlatformKind::kNoGpu) {
      out_.unavailable.push_back(Msg("GPU: platform none, GPU readings not judged"));
    } else {
      bits = ReasonBits();
      collapse = Collapse();
      plateau = Plateau();
    }
    contention = Contention();
    host = HostSide();
  } else if (in_.events && w_.start_time) {
    bits = ReasonBits();  // events alone can still speak
    collapse = Collapse();
    contention = Contention();
  }
  // Priority order of verdict.h; the rest go to `also`.
  const std::pair<bool, SlowdownCause> order[] = {
      {bits, SlowdownCause::kThermal},    {collapse, SlowdownCause::kClockCollapse},
      {plateau, SlowdownCause::kThermal}, {contention, SlowdownCause::kContention},
      {host, SlowdownCause::kHostSide},
  };
  bool chosen = false;
  for (const auto& [matched, cause] : order) {
    if (!matched) continue;
    if (!chosen) {
      out_.cause = cause;
      chosen = true;
    } else if (cause != out_.cause &&
               std::find(out_.also.begin(), out_.also.end(), cause) == out_.also.end()) {
      out_.also.push_back(cause);
    }
  }
  out_.advice = SlowdownCauseAdvice(out_.cause, in_.profile.kind);
  if (!chosen && span_.window.empty()) {
    // Nothing was measured, so nothing was ruled out either: "no cause in the samples"
    // would claim a search that did not happen.
    out_.advice = Msg(
        "no samples cover this slowdown: run the job under `headroom watch` to diagnose this "
        "(and pass its samples with --samples); meanwhile check the data loader, evaluation and "
        "checkpoint steps");
  }
  return out_;
}

}  // namespace

std::string_view SlowdownCauseName(SlowdownCause cause) {
  switch (cause) {
    case SlowdownCause::kThermal:
      return "thermal";
    case SlowdownCause::kClockCollapse:
      return "clock-collapse";
    case SlowdownCause::kContention:
      return "contention";
    case SlowdownCause::kHostSide:
      return "host-side";
    case SlowdownCause::kUnexplained:
      break;
  }
  return "unexplained";
}

Message SlowdownCauseWord(SlowdownCause cause) {
  switch (cause) {
    // TRANSLATORS: explain's verdict: the GPU's power or thermal limit set the pace.
    case SlowdownCause::kThermal:
      return MsgFrom(N_("thermal"));
    // TRANSLATORS: explain's verdict: SM clocks collapsed with no throttle reason.
    case SlowdownCause::kClockCollapse:
      return MsgFrom(N_("clock-collapse"));
    case SlowdownCause::kContention:
      return MsgFrom(N_("contention"));
    // TRANSLATORS: explain's verdict: the host (CPU, data loading) held the GPU back.
    case SlowdownCause::kHostSide:
      return MsgFrom(N_("host-side"));
    case SlowdownCause::kUnexplained:
      break;
  }
  return MsgFrom(N_("unexplained"));
}

Message SlowdownCauseAdvice(SlowdownCause cause, PlatformKind platform) {
  switch (cause) {
    case SlowdownCause::kThermal:
      return platform == PlatformKind::kGb10
                 ? Msg("expected platform behaviour: GB10 sustains about 100 W against its 240 W "
                       "rating and slows as it heats; do not retune batch size or precision for it "
                       "(give the machine air, or accept the sustained rate)")
                 : Msg("expected behaviour at the GPU's power or thermal limit; do not retune "
                       "batch "
                       "size or precision for it (check cooling and the power limit instead)");
    case SlowdownCause::kClockCollapse:
      return platform == PlatformKind::kGb10
                 ? Msg("GB10's degraded clock state (500-850 MHz with no throttle bit): a reboot "
                       "does not clear it; shut down, unplug the power for 60 s, then start again")
                 : Msg("clocks held far below normal with no reason bit: check application clocks "
                       "and power delivery; a full power-off (unplug for 60 s) clears a stuck "
                       "state "
                       "that a reboot may not");
    case SlowdownCause::kContention:
      return Msg(
          "another job shared the GPU or the memory pool: stop it or run the jobs one at a "
          "time; under memory pressure drop the page cache or lower the other job's use");
    case SlowdownCause::kHostSide:
      return Msg(
          "the GPU waited for the host: the CPUs were busy (data loading, tokenization, "
          "augmentation); pre-process the data set once, or check for host-side heat and "
          "other CPU-heavy work");
    case SlowdownCause::kUnexplained:
      break;
  }
  return Msg(
      "no GPU, memory or host cause in the samples: check the data loader, evaluation and "
      "checkpoint steps, and the config for what runs at these steps");
}

WindowVerdict ExplainWindow(const SlowdownWindow& window, const VerdictInputs& inputs,
                            const VerdictThresholds& thresholds) {
  return Judge(window, inputs, thresholds).Run();
}

}  // namespace headroom
