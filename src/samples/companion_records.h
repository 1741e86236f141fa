// The companion's step records (docs/companion.md): JSON lines that python/headroom appends,
// inside the job, to the file named by HEADROOM_STEP_RECORDS, schema "headroom.step/1". One
// line is one record: a process's "start", a "step", or a checkpoint's "save_start" and
// "save_end". The guard reads them as the job runs (whom to ask for a checkpoint, how long the
// last one took), explain and report for exact step times, sweep for the job's own peak.
//
// The file is written by the job, so it is outside data: every field is checked, a line that
// is not a record of this schema is counted and skipped (never an error for the whole file),
// and a line longer than kMaxCompanionLineBytes is dropped unread. Records of another schema
// ("headroom.step/2" one day) are counted apart, so a reader can say it did not understand
// them rather than that they were broken.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/message.h"
#include "base/result.h"
#include "base/safe_file.h"

namespace headroom {

inline constexpr std::string_view kCompanionSchema = "headroom.step/1";
// The companion's lines are under 600 bytes (a save_end with a long path and error text);
// anything over this is not one of them.
inline constexpr size_t kMaxCompanionLineBytes = 16384;

// The largest byte figure a record may carry: 2^53, the largest integer every JSON reader holds
// exactly (a double's mantissa), and 9 PB, far above any machine's memory. A figure above it is
// no reading but a forged or broken record; it is refused, so sums of figures cannot wrap
// (two peaks of 2^63 added to 0, issue 29).
inline constexpr uint64_t kMaxRecordBytes = uint64_t{1} << 53;

enum class CompanionKind : uint8_t { kStart, kStep, kSaveStart, kSaveEnd };
std::string_view CompanionKindName(CompanionKind kind);  // "start", "step", ...

struct CompanionRecord {
  CompanionKind kind = CompanionKind::kStep;
  int64_t pid = 0;  // > 0: the process that wrote it
  std::optional<int64_t> rank;
  double wall_s = 0;            // Unix time (time.time())
  double mono_s = 0;            // CLOCK_MONOTONIC (time.monotonic()), the guard's own clock
  std::optional<int64_t> step;  // >= 0
  // step
  std::optional<int64_t> tokens;                 // >= 0
  std::optional<double> loss;                    // as the job reported it: nan and inf kept
  std::optional<double> lr;                      // finite
  std::optional<uint64_t> allocated_bytes;       // torch.cuda.memory_allocated()
  std::optional<uint64_t> reserved_bytes;        // torch.cuda.memory_reserved()
  std::optional<uint64_t> peak_allocated_bytes;  // torch.cuda.max_memory_allocated()
  std::optional<uint64_t> host_peak_rss_bytes;   // getrusage(RUSAGE_SELF) ru_maxrss
  // start
  std::string framework;      // "plain", "transformers", "lightning", "hooks"
  std::optional<int> signal;  // the signal it handles as a save request (1..64), or none
  bool request_file = false;  // it also takes the request file
  // save_start, save_end
  std::string reason;                // "guard" (asked for) or "scheduled" (the trainer's own)
  std::optional<double> duration_s;  // save_end: >= 0
  std::string path;                  // save_end: where the checkpoint is ("" when unknown)
  bool ok = false;                   // save_end: the save returned
  std::string error;                 // save_end: why not
  // save_start, save_end: what wrote the checkpoint, "transformers" (the Trainer callback),
  // "lightning" or "loop" (headroom.on_save); "" when the record does not say (an optional
  // key of headroom.step/1: companions before it wrote none). Kept as written, bounded.
  std::string source;
};

// One line (without its '\n'). Errors: a message saying what is wrong ("not JSON: ...",
// "no \"kind\"", "\"pid\" is not a positive integer", "schema \"x\" is not headroom.step/1").
Result<CompanionRecord> ParseCompanionRecord(std::string_view line);

struct CompanionRecords {
  std::vector<CompanionRecord> records;
  uint64_t bad_lines = 0;                  // not a record (the first one's reason below)
  uint64_t other_schema = 0;               // a record of another schema version
  std::optional<uint64_t> first_bad_line;  // 1-based
  Message first_error;
};

// The job's own peak from its records (sweep's trial peak, docs/sweep.md): per process, the
// largest torch allocator peak (max_memory_allocated: GPU memory, which on unified memory is
// in no process's RSS) plus the largest host peak RSS, summed over the processes (ranks). The
// sums stop at kMaxRecordBytes (records built by hand are not checked like parsed ones).
struct CompanionPeak {
  uint64_t allocator_peak_bytes = 0;
  uint64_t host_peak_bytes = 0;
  int processes = 0;
  bool has_allocator = false;  // some record carried allocator figures (CUDA was in use)
  uint64_t total_bytes() const;
};
struct CompanionRecords;
// nullopt when no step record carries a host or an allocator figure.
std::optional<CompanionPeak> PeakFromRecords(const CompanionRecords& records);

// A whole file's text. Blank lines are skipped; a last line without '\n' is read (a job killed
// mid-write leaves one; if it is cut short it is a bad line).
CompanionRecords ParseCompanionRecords(std::string_view text);

// Reads records as they are appended to a file, a bounded amount per call: the guard's view of
// a running job. A line is taken only once its '\n' has arrived; a partial line longer than
// kMaxCompanionLineBytes is dropped up to its '\n'. The file is opened once it exists and kept
// open, so a poll of a file that has not grown is one fstat; a file that shrinks (truncated)
// is read again from its start. Anything but a regular file is never read.
class CompanionTail {
 public:
  explicit CompanionTail(std::string path) : path_(std::move(path)) {}
  // The records completed since the last call: at most `max_bytes` of the file read (so one
  // call has a bounded cost however fast the job writes). A missing file is no records.
  std::vector<CompanionRecord> Poll(size_t max_bytes = 1 << 20);
  uint64_t bad_lines() const { return bad_lines_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  FileFd fd_;
  uint64_t offset_ = 0;
  std::string partial_;
  bool skipping_ = false;  // inside an over-long line: drop up to its '\n'
  uint64_t bad_lines_ = 0;
};

}  // namespace headroom
