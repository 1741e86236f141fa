// Verdicts: why a slowdown window (explain/slowdown.h) happened, from the samples of
// `headroom watch` (samples/samples_csv.h) and its --events lines (samples/sample_events.h) over
// the same wall-clock span. Pure: readings in, a cause with its evidence out.
//
// Causes, tried in this order (the first that matches is the verdict; the others that also
// match are listed); thresholds in VerdictThresholds, reasons in docs/explain.md:
//   thermal         a power or thermal clock-event bit (sw_power_cap, hw_slowdown,
//                   sw_thermal_slowdown, hw_thermal_slowdown, hw_power_brake_slowdown) set in
//                   the window, or a power_plateau / throttle_set event in it: the driver
//                   itself says why;
//   clock-collapse  SM clock far below the platform's normal (or in GB10's degraded band)
//                   while the GPU is busy, power is low and no bit is set;
//   thermal         (again) power flat near the platform's sustained figure while the
//                   temperature climbs, with no bit (GB10 sets none for its power limit);
//   contention      another process started using the GPU just before or during the window
//                   (events), or memory pressure rose: PSI some avg10 high, MemAvailable
//                   falling, a memory_pressure event;
//   host-side       the GPU underfed (low utilization.gpu) while the CPUs are busy;
//   unexplained     none of these.
// Collapse is tried before the power plateau because a degraded GB10 may sit near 100 W too,
// and a clock in the 500-850 MHz band with no bit is the one reading only the degraded state
// gives; a set bit is tried first because it is the driver's own statement.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/message.h"
#include "base/wall_time.h"
#include "explain/run_inputs.h"
#include "explain/slowdown.h"
#include "gpu/platform.h"
#include "samples/sampler.h"
#include "samples/samples_csv.h"

namespace headroom {

enum class SlowdownCause { kThermal, kClockCollapse, kContention, kHostSide, kUnexplained };

// "thermal", "clock-collapse", "contention", "host-side", "unexplained": identifiers
// (explain --json, the report), never translated.
std::string_view SlowdownCauseName(SlowdownCause cause);
// The same verdict as a word for people (translated on the terminal, cli/message_text.h).
Message SlowdownCauseWord(SlowdownCause cause);
// One or two sentences of what to do; clock-collapse advice depends on the platform.
Message SlowdownCauseAdvice(SlowdownCause cause, PlatformKind platform);

struct VerdictThresholds {
  // Clock-event bits: set in at least this share of the window's samples that have the
  // column (a quarter: a bit that flickers once in a long window is not the cause).
  double reason_min_share = 0.25;
  // Power plateau: mean power at least 90% of the sustained figure (GB10: 90 W of 100 W),
  // at least 80% of the samples within +-10% of the mean (GB10's 100 ms power loop makes
  // single readings swing; sample_events.h uses 5% over 5 samples, a window is longer), and
  // the temperature up by `temperature_rise_c` from its lowest (looking back one window
  // length before the start) to its highest in the window.
  double plateau_min_fraction = 0.90;
  double plateau_band = 0.10;
  double plateau_min_share = 0.80;
  int temperature_rise_c = 3;
  // Collapse: the same figures as sample_events.h (half the normal clock or GB10's degraded
  // band, power under half the rated figure, utilization >= 50% when known), in at least
  // half of the window's samples with a clock reading.
  double collapse_clock_fraction = 0.5;
  double collapse_max_power_fraction = 0.5;
  uint32_t busy_utilization_pct = 50;
  double collapse_min_share = 0.5;
  // Contention: PSI some avg10 at or above 10% (sample_events.h), MemAvailable down 1 GiB or
  // more across the window; events from `event_lookback_s` before the start (a process that
  // started a minute earlier may only now be allocating).
  double psi_some_avg10_pct = 10.0;
  uint64_t mem_fall_bytes = uint64_t{1} << 30;
  double event_lookback_s = 60;
  // Host-side: mean utilization.gpu under 50% while mean cpu.util is 70% or more (the
  // loader's workers, tokenization or a CPU-bound step hold the GPU back).
  double underfed_utilization_pct = 50;
  double cpu_busy_pct = 70;
  // Timing (explain/cause_timing.h): a cause seen absent this long after the slowdown began,
  // or before it ended, or still holding this long after the steps were fast again, is not
  // its cause. Two seconds absorb log stamps rounded to the second.
  double timing_tolerance_s = 2;
};

// Evidence, `unavailable` and advice are message values: the terminal renders them in the
// user's language, data writers (explain --json, the report) in English.
struct Evidence {
  std::optional<WallTime> time;  // the first sample or event behind it
  Message text;
};

// What the samples said over the window.
struct WindowReadings {
  size_t samples = 0;
  std::optional<double> power_w_mean;
  std::optional<int> temperature_c_min;  // over the window and one window length before it
  std::optional<int> temperature_c_max;  // over the window
  std::optional<double> sm_clock_mhz_median;
  std::optional<double> gpu_utilization_pct_mean;
  std::optional<double> cpu_util_pct_mean;
  std::optional<double> psi_some_avg10_pct_max;
  std::optional<int64_t> mem_available_change_bytes;  // last minus first; negative: fell
  std::vector<std::string> reasons;  // slowdown bit names seen in the window (identifiers)
};

struct WindowVerdict {
  SlowdownCause cause = SlowdownCause::kUnexplained;
  std::vector<SlowdownCause> also;   // other causes whose test matched
  std::vector<Evidence> evidence;    // for the verdict and the others
  std::vector<Message> unavailable;  // evidence that could not be checked, and why
  // Causes whose readings matched but whose timing does not fit the window, and why (their
  // advice is not given).
  std::vector<Message> ruled_out;
  Message advice;
  WindowReadings readings;
};

struct VerdictInputs {
  PlatformProfile profile;
  const std::vector<Sample>* samples = nullptr;        // null: no --samples
  const std::vector<RecordedEvent>* events = nullptr;  // null: no --events
  double sample_interval_s = 0;  // the header's interval_ms / 1000; 0 when unknown
};

// The samples a window's verdict reads: those stamped from `from` to `to` (the window widened
// by half the sampling interval on each side), and from `before` (one window length earlier)
// up to `from` for the temperature's lowest. nullopt when the window has no wall-clock times.
struct SampleSpan {
  WallTime before, from, to;
};
std::optional<SampleSpan> WindowSampleSpan(const SlowdownWindow& window, double sample_interval_s);

WindowVerdict ExplainWindow(const SlowdownWindow& window, const VerdictInputs& inputs,
                            const VerdictThresholds& thresholds = {});

}  // namespace headroom
