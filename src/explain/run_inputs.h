// The inputs `explain` judges a run by, besides its log: the --events lines of `headroom
// watch` and the platform profile the samples are read against. Pure parsers, no I/O.
#pragma once

#include <cstddef>
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

// The profile to judge samples by. GB10: the platform's constants (gpu/platform.h), detected
// from the header's device= (or platform=gb10), else from the values: GPU readings present,
// NVML device memory empty in every row and MemTotal 115-135 GiB (GB10's 121.7 GiB pool).
// Discrete: the run's own figures, since the samples carry no limits: normal SM clock and
// sustained power are the 95th percentiles of the run, rated power its maximum. None: no
// GPU readings at all. `forced` (--platform) overrides detection.
PlatformProfile ProfileFromSamples(const SampleSeries& series, std::optional<PlatformKind> forced,
                                   PlatformSource* source);

}  // namespace headroom
