// The inputs `explain` judges a run by, besides its log: the --events lines of `headroom
// watch` and the platform profile the samples are read against. Pure parsers, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/wall_time.h"
#include "gpu/platform.h"
#include "samples/samples_csv.h"

namespace headroom {

// One line of an --events file: {"type":"...","wall_time":"...","data":{...}}.
struct RecordedEvent {
  std::string type;
  WallTime time{};
  std::string data_json;  // the "data" object as text, "{}" when absent
};

struct RecordedEvents {
  std::vector<RecordedEvent> events;  // in file order
  size_t skipped_lines = 0;           // not JSON, or no "type" / parsable "wall_time"
};

// Parses an events file (blank lines ignored). Never fails: bad lines are counted.
RecordedEvents ParseEventLines(std::string_view text);

// Where the platform profile came from; kConfig: config.toml [platform] kind or
// HEADROOM_PLATFORM (docs/config.md), set by the CLI in place of kFlag.
enum class PlatformSource { kFlag, kHeader, kValues, kNone, kConfig };
// "flag", "header", "values", "none", "config"
std::string_view PlatformSourceName(PlatformSource source);

// What the platform detection below needs from every row, gathered row by row so that a
// reader need not keep the rows (explain keeps only its windows' rows). The readings are
// counted by value: memory is the distinct SM clocks (MHz) and power readings (mW), not rows.
class SampleProfileStats {
 public:
  void Add(const Sample& s);
  // The p-th percentile (0..1) by rank, as of the sorted readings: the value at index
  // floor(p * (n - 1)); 0 without readings.
  static uint32_t Percentile(const std::map<uint32_t, uint64_t>& counts, double p);

  std::map<uint32_t, uint64_t> clocks_mhz, power_mw;  // reading -> rows
  bool gpu = false;                                   // any GPU reading
  bool device_memory = false;                         // any NVML device memory figure
  std::optional<uint64_t> mem_total_bytes;            // the last row's MemTotal
};

// The profile to judge samples by. GB10: the platform's constants (gpu/platform.h), detected
// from the header's device= (or platform=gb10), else from the values: GPU readings present,
// NVML device memory empty in every row and MemTotal 115-135 GiB (GB10's 121.7 GiB pool).
// Discrete: the run's own figures, since the samples carry no limits: normal SM clock and
// sustained power are the 95th percentiles of the run, rated power its maximum. None: no
// GPU readings at all. `forced` (--platform) overrides detection.
PlatformProfile ProfileFromSamples(const SampleSeries& series, std::optional<PlatformKind> forced,
                                   PlatformSource* source);
// The same from the series' header and the stats of all its rows (kept or not).
PlatformProfile ProfileFromSamples(const SampleSeries& series, const SampleProfileStats& stats,
                                   std::optional<PlatformKind> forced, PlatformSource* source);

}  // namespace headroom
