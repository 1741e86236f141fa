// The samples file of `headroom watch`: a CSV of Sample rows, written durably and read back
// by `headroom explain` (docs/watch.md has every column and unit).
//
//   # headroom samples schema_version=1 host=spark-1 device="NVIDIA GB10" platform=gb10 ...
//   # units: timestamp=ISO8601, temperature.gpu=C, power.draw=W, clocks.sm=MHz, ...
//   # note: ...                                  (zero or more)
//   timestamp,temperature.gpu,power.draw,clocks.sm,...
//   2026-11-29T10:00:00.123+00:00,61,99.50,2405,...
//
// The first three columns are nvidia-smi's query names, so a file from
// `nvidia-smi --query-gpu=timestamp,temperature.gpu,power.draw --format=csv,nounits` lines up
// with ours by name. An empty field is "no reading" (n/a), never 0. clocks_event_reasons is
// the decoded names joined with '|', "none" when the driver said no bit is set, and empty
// when it could not be read.
//
// Versioning (docs/style.md rule 13): the reader maps columns by NAME, ignores columns it does
// not know (kept as extra columns when numeric) and refuses a schema_version above its own;
// a version-1 reader reads any version-1 file, whatever columns later writers append.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/durable_lines.h"
#include "base/result.h"
#include "base/wall_time.h"
#include "samples/sampler.h"

namespace headroom {

inline constexpr int kSamplesSchemaVersion = 1;

// A column of the fixed schema and its unit, in file order.
struct SampleColumn {
  std::string_view name;
  std::string_view unit;
};

// Units: ISO8601 (with UTC offset), C (degrees Celsius), W (watts), MHz, J (joules), B
// (bytes), % (percent), names (clock-event reason names joined with '|').
inline constexpr SampleColumn kSampleColumns[] = {
    {"timestamp", "ISO8601"},
    {"temperature.gpu", "C"},
    {"power.draw", "W"},
    {"clocks.sm", "MHz"},
    {"clocks.mem", "MHz"},
    {"clocks_event_reasons", "names"},
    {"utilization.gpu", "%"},
    {"energy", "J"},
    {"mem.total", "B"},
    {"mem.available", "B"},
    {"mem.cached", "B"},
    {"mem.free", "B"},
    {"swap.used", "B"},
    {"psi.memory.some.avg10", "%"},
    {"psi.memory.full.avg10", "%"},
    {"cpu.util", "%"},
    {"memory.total", "B"},  // GPU device memory (NVML); empty on GB10 and Jetson
    {"memory.used", "B"},
};

// What the first comment line says about the run.
struct SamplesHeader {
  std::string host;
  std::string device;    // NVML name of the sampled GPU, "none" without one
  std::string platform;  // PlatformKindName
  int64_t interval_ms = 0;
  WallTime started{};
  std::vector<ExtraColumn> extra_columns;  // appended after kSampleColumns, in this order
  std::vector<std::string> notes;          // "# note: ..." lines
};

// The comment lines and the column row, each ending in '\n'.
std::string FormatSamplesHeader(const SamplesHeader& header);
// One row ending in '\n'; `s.extra` is written for the header's extra columns (missing
// values are empty fields).
std::string FormatSampleRow(const Sample& s, size_t extra_columns);

// The writer: the header at Create, then one durable line per sample (base/durable_lines.h).
class SamplesCsvWriter {
 public:
  static Result<SamplesCsvWriter> Create(const std::filesystem::path& path,
                                         const SamplesHeader& header,
                                         std::chrono::milliseconds sync_period);
  Result<size_t> Append(const Sample& s);
  Result<size_t> Sync() { return file_.Sync(); }
  uint64_t rows() const { return rows_; }
  const DurableLines& file() const { return file_; }  // its first_error() after a full disk

 private:
  SamplesCsvWriter(DurableLines file, size_t extra) : file_(std::move(file)), extra_(extra) {}
  DurableLines file_;
  size_t extra_ = 0;
  uint64_t rows_ = 0;
};

// A samples file read back.
struct SampleSeries {
  int schema_version = 0;
  // key=value pairs of the "# headroom samples" line: host, device, platform, interval_ms,
  // started, and any a later writer adds.
  std::map<std::string, std::string, std::less<>> header;
  std::map<std::string, std::string, std::less<>> units;  // column -> unit ("# units:")
  std::vector<std::string> notes;                         // "# note:" lines
  std::vector<std::string> columns;                       // as in the file
  // Columns outside kSampleColumns (hwmon, thermal, a later writer's), in file order; each
  // Sample's `extra` is parallel to this. Non-numeric values read as nullopt.
  std::vector<ExtraColumn> extra_columns;
  std::vector<Sample> samples;  // in file order (those a reader's `keep` kept)
  size_t rows = 0;              // rows parsed, kept or not
  // Rows skipped: wrong field count, unparsable timestamp, NUL bytes (a power loss can
  // leave a block of zeros at the end of a file).
  size_t skipped_rows = 0;
  // Fields that did not parse as their column's type and were read as n/a.
  size_t bad_fields = 0;
  bool torn_last_line = false;  // the text did not end in '\n': its last line was skipped
};

// Parses a samples file. Errors (one line): no "# headroom samples" line before the column
// row, a schema_version this reader does not know (newer than kSamplesSchemaVersion), no
// column row, no "timestamp" column, duplicate column names.
Result<SampleSeries> ParseSamplesCsv(std::string_view text);
// Reads and parses `path` (capped at `max_bytes`); errors name the file.
Result<SampleSeries> ReadSamplesCsv(const std::filesystem::path& path,
                                    size_t max_bytes = size_t{1} << 30);

// Called with the series read so far (its header, units and columns complete) and each parsed
// row in file order; a row is stored in `samples` only when it returns true.
using SampleRowFilter = std::function<bool(const SampleSeries&, const Sample&)>;
// The same read, keeping only the rows `keep` wants: memory is the kept rows, not the file's
// (explain keeps the rows its slowdown windows look at, explain/explain_report.h).
Result<SampleSeries> ReadSamplesCsv(const std::filesystem::path& path, size_t max_bytes,
                                    const SampleRowFilter& keep);

// The bit mask of clock-event reason names joined with '|' ("none" is 0; "unknown_0x200"
// style names give their bits). nullopt for an empty text or an unknown name.
std::optional<uint64_t> ParseClockEventReasonNames(std::string_view text);

}  // namespace headroom
