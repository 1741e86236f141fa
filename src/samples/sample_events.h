// Events in a stream of samples: the moments `headroom watch` reports as they happen (a line
// on stderr, a row in --events), so that a slowdown has its cause written beside it. A pure
// class fed one Sample at a time; thresholds below, each with its reason (docs/watch.md).
//
//   throttle_set / throttle_cleared   a clock-event reason bit went on / off (gpu_idle is
//                                     left out: it flips with every pause in the work)
//   power_plateau                     power held near the platform's sustained figure while
//                                     the temperature keeps rising: the cooling or the power
//                                     controller, not the job, now sets the pace
//   clock_collapse / clock_recovered  SM clock far below the platform's normal under load,
//                                     with power well under the budget and no reason bit:
//                                     GB10's degraded state (platform.h), invisible to NVML
//   memory_pressure                   PSI some avg10 crossing up through its threshold, or
//                                     MemAvailable falling fast
//   gpu_process_started / _ended      a PID appeared in / left NVML's compute process list
//   gpu_lost                          the driver answered GPU_IS_LOST
//
// Each condition reports once per episode: it re-arms when the condition has cleared.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/message.h"
#include "base/wall_time.h"
#include "gpu/platform.h"
#include "samples/sampler.h"

namespace headroom {

struct EventThresholds {
  // power_plateau: the last `plateau_samples` samples all within `plateau_band` (fraction)
  // of their mean, the mean at least `plateau_min_fraction` of the sustained figure (GB10:
  // 90 W of 100 W), and the temperature up by at least `plateau_min_rise_c` across them.
  // Five samples: one is noise, and GB10's firmware runs a 100 ms power loop that makes
  // single readings swing (reference section 2.3); NVML's power is a 1 s average.
  size_t plateau_samples = 5;
  double plateau_band = 0.05;
  double plateau_min_fraction = 0.90;
  int plateau_min_rise_c = 2;
  // clock_collapse: SM clock below `collapse_clock_fraction` of the platform's normal clock
  // or in its degraded band (GB10: 500-850 MHz against 2400 MHz), power below
  // `collapse_max_power_fraction` of the rated figure (GB10: 120 W of 240 W), no slowdown
  // bit, the GPU busy (utilization at least `collapse_min_utilization_pct` when known, no
  // gpu_idle bit), for `collapse_samples` samples in a row (an idle dip between steps is
  // not a collapse).
  double collapse_clock_fraction = 0.5;
  double collapse_max_power_fraction = 0.5;
  uint32_t collapse_min_utilization_pct = 50;
  size_t collapse_samples = 2;
  // memory_pressure: PSI memory some avg10 at or above `psi_some_avg10_pct` (10%: a tenth of
  // the last 10 s with a task stalled on memory; sparkview's "high" band starts there);
  // re-arms below half of it. Or MemAvailable falling at `fall_bytes_per_s` or more (1 GB/s,
  // the guard's "fast fall", src/run/guard.cc) by at least `fall_min_bytes` (1 GiB) between
  // two samples.
  double psi_some_avg10_pct = 10.0;
  double fall_bytes_per_s = 1e9;
  uint64_t fall_min_bytes = uint64_t{1} << 30;
};

struct SampleEvent {
  std::string type;  // "throttle_set", "clock_collapse", ...
  WallTime time{};   // the sample's time
  Message message;   // one line for people (never in the events file)
  std::string data;  // JSON object text with the readings behind it: {"reason":"..."}
};

class SampleEventDetector {
 public:
  explicit SampleEventDetector(PlatformProfile profile, EventThresholds thresholds = {});

  // The events that `s` (the next sample in time order) starts.
  std::vector<SampleEvent> Feed(const Sample& s);

 private:
  void Throttle(const Sample& s, std::vector<SampleEvent>& out);
  void Plateau(const Sample& s, std::vector<SampleEvent>& out);
  void Collapse(const Sample& s, std::vector<SampleEvent>& out);
  void Memory(const Sample& s, std::vector<SampleEvent>& out);
  void Processes(const Sample& s, std::vector<SampleEvent>& out);

  PlatformProfile profile_;
  EventThresholds t_;
  uint64_t reasons_ = 0;                          // last known mask (gpu_idle excluded)
  std::vector<std::pair<uint32_t, int>> window_;  // power_mw, temperature_c
  bool plateau_ = false;
  size_t collapse_run_ = 0;
  bool collapsed_ = false;
  bool psi_high_ = false;
  bool falling_ = false;
  std::optional<std::pair<WallTime, uint64_t>> last_available_;
  std::optional<std::set<uint32_t>> pids_;
  bool lost_ = false;
};

// {"type":"...","wall_time":"...","data":{...}}\n, the --events row; the same keys as the
// guard's events ("type", "wall_time"), which share the file when --guard is given.
std::string SampleEventJson(const SampleEvent& e);

}  // namespace headroom
