// Synthetic training runs with known answers for `explain`: a log as `headroom watch --log`
// writes it (arrival-stamped tqdm segments ending in '\r') and the samples CSV of the same
// wall-clock span, written with the real writer's formatting (samples/samples_csv.h), so the
// tests read them through the same parsers as the CLI.
//
// The run: `steps` steps at 0.5 s each from 2026-11-29T10:00:00Z, steps slow_first..slow_last
// at `slow_factor` x that. Samples every 2 s. What the samples hold in the slow stretch
// depends on the scenario; outside it the GPU is healthy: GB10 at 100 W, 60 C, 2400 MHz,
// 97% busy, no clock-event bit, CPUs 20% busy, no memory pressure.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "samples/samples_csv.h"

namespace headroom::testing {

enum class Scenario {
  kClean,           // no slow stretch at all
  kThermalPlateau,  // power flat at ~100 W, temperature climbing 62 -> 80 C, no bit
  kThermalBit,      // sw_thermal_slowdown set, 86 C
  kClockCollapse,   // SM clock 700 MHz, power 35 W, GPU busy, no bit
  kContention,      // another GPU process (events) and PSI 25%, MemAvailable falling 4 GiB
  kHostSide,        // utilization.gpu 30% while the CPUs are 92% busy
  kUnexplained,     // slow steps, every reading as healthy as before
  kNoGpu,           // a slow stretch and samples with every GPU field empty
};

struct SyntheticRun {
  std::string log;
  std::string samples_csv;
  std::string events_jsonl;  // empty unless the scenario writes events
  WallTime slow_start{}, slow_end{};
};

inline WallTime SyntheticStart() {
  return WallTime(std::chrono::seconds(1'795'946'400));
}  // 2026-11-29T10:00:00Z

inline SyntheticRun MakeSyntheticRun(Scenario scenario, int steps = 300, int slow_first = 120,
                                     int slow_last = 200, double slow_factor = 2.0) {
  using std::chrono::milliseconds;
  SyntheticRun run;
  const WallTime t0 = SyntheticStart();
  const bool slowed = scenario != Scenario::kClean;
  // The log: one tqdm update per step, each stamped with its arrival time.
  double elapsed = 0;
  for (int s = 1; s <= steps; ++s) {
    const bool slow = slowed && s >= slow_first && s <= slow_last;
    const double dt = 0.5 * (slow ? slow_factor : 1.0);
    if (slow && s == slow_first)
      run.slow_start = t0 + milliseconds(static_cast<int64_t>(elapsed * 1000));
    elapsed += dt;
    if (slow && s == slow_last)
      run.slow_end = t0 + milliseconds(static_cast<int64_t>(elapsed * 1000));
    const auto at = t0 + milliseconds(static_cast<int64_t>(elapsed * 1000));
    const int e = static_cast<int>(elapsed);
    run.log += fmt::format("{} {:3d}%|#         | {}/{} [{:02d}:{:02d}<00:00, {:.2f}it/s]\r",
                           FormatUtcIso8601(at), s * 100 / steps, s, steps, e / 60, e % 60, 1 / dt);
  }
  run.log += "\n";

  SamplesHeader header;
  header.host = "spark-test";
  header.device = scenario == Scenario::kNoGpu ? "none" : "NVIDIA GB10";
  header.platform = scenario == Scenario::kNoGpu ? "none" : "gb10";
  header.interval_ms = 2000;
  header.started = t0;
  run.samples_csv = FormatSamplesHeader(header);
  const double slow_from = std::chrono::duration<double>(run.slow_start - t0).count();
  const double slow_to = std::chrono::duration<double>(run.slow_end - t0).count();
  for (int i = 0; i * 2.0 <= elapsed + 2; ++i) {
    const double t = i * 2.0;
    const bool in = slowed && t >= slow_from && t <= slow_to;
    const double into = in ? (t - slow_from) / (slow_to - slow_from) : 0;  // 0..1 across it
    Sample s;
    s.time = t0 + milliseconds(static_cast<int64_t>(t * 1000));
    s.mem_total_bytes = uint64_t{127'600'748} * 1024;
    s.mem_available_bytes = uint64_t{100} << 30;
    s.psi_some_avg10_pct = 0.0;
    s.psi_full_avg10_pct = 0.0;
    s.cpu_util_pct = 20.0;
    if (scenario != Scenario::kNoGpu) {
      s.temperature_c = 60;
      s.power_mw = 100'000 + (i % 2 ? 600 : -600);  // GB10's power loop: small swings
      s.sm_clock_mhz = 2400;
      s.clock_event_reasons = 0;
      s.gpu_utilization_pct = 97;
    }
    if (in) {
      switch (scenario) {
        case Scenario::kThermalPlateau:
          s.temperature_c = 62 + static_cast<int>(18 * into);
          s.sm_clock_mhz = 1800;
          break;
        case Scenario::kThermalBit:
          s.temperature_c = 86;
          s.sm_clock_mhz = 1500;
          s.clock_event_reasons = 0x20;  // sw_thermal_slowdown
          break;
        case Scenario::kClockCollapse:
          s.sm_clock_mhz = 700;
          s.power_mw = 35'000;
          break;
        case Scenario::kContention:
          s.psi_some_avg10_pct = 25.0;
          s.mem_available_bytes =
              (uint64_t{100} << 30) - static_cast<uint64_t>(into * 4 * (1 << 30));
          break;
        case Scenario::kHostSide:
          s.gpu_utilization_pct = 30;
          s.cpu_util_pct = 92.0;
          s.power_mw = 45'000;
          break;
        default:
          break;
      }
    }
    run.samples_csv += FormatSampleRow(s, 0);
  }
  if (scenario == Scenario::kContention) {
    run.events_jsonl = fmt::format(
        "{{\"type\":\"gpu_process_started\",\"wall_time\":\"{}\",\"data\":{{\"pid\":4242,"
        "\"gpu_processes\":2}}}}\n",
        FormatUtcIso8601(run.slow_start - std::chrono::seconds(5)));
  }
  return run;
}

}  // namespace headroom::testing
