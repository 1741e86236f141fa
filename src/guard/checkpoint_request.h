// Checkpoint before the kill (docs/guard.md, "Checkpoint before the kill"): when MemAvailable
// crosses the warning level and the projection leaves time before the kill level, the guard
// asks the job's companion (python/headroom, docs/companion.md) to save at the end of its
// current step, once per crossing, and records whether the save came, how long it took and
// where it is.
//
// Whom it asks: only processes of the job's tree that announced themselves in the step
// records ("start" records) and said which signal they handle; a process that did not is
// never sent a signal whose default action would end it. A companion that takes the request
// file is asked through it too. Without a companion nothing is asked and the summary says so.
//
// What it never does: delay a kill. The kill policy (guard/kill_policy.h) decides as it always
// did; this runs beside it, and a kill that comes while a save runs is recorded as such.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/message.h"
#include "samples/companion_records.h"
#include "sys/sysroot.h"

namespace headroom {

class Child;
class GuardEvents;

// Without --checkpoint-grace and before any save was measured, the time a save is assumed to
// need: a small model's torch.save takes well under a second, a 8B model's optimizer state
// several seconds on NVMe; 10 s keeps a fast fill from asking for a save it cannot finish.
inline constexpr double kDefaultCheckpointNeedSeconds = 10.0;

struct CheckpointOptions {
  std::string records_path;  // HEADROOM_STEP_RECORDS: the file the companion appends to
  std::string request_path;  // HEADROOM_CHECKPOINT_REQUEST: created to ask ("" for none)
  int signal = 10;           // SIGUSR1 by default; 0: the request file only
  std::optional<std::chrono::milliseconds> grace;  // --checkpoint-grace: the time a save needs
  // Why nothing can be asked at all (--pid without --step-records): nothing is read or sent,
  // and the summary's not_asked says this from the start.
  Message unavailable;
};

// What the summary, the events and the journal say (GuardSummaryJson "checkpoint").
struct CheckpointSummary {
  bool companion_seen = false;  // a start record came from the job's tree
  bool asked = false;
  std::optional<double> asked_after_s;            // since the guard started
  std::optional<uint64_t> asked_available_bytes;  // MemAvailable when it asked
  std::optional<double> projected_s;              // time to the kill level it projected then
  double need_s = 0;                              // what the save was expected to need
  std::string how;  // "SIGUSR1", "request file", "SIGUSR1 and request file"
  int processes_asked = 0;
  bool started = false;
  bool finished = false;
  bool ok = false;    // the save function returned (a failed one has `error`)
  bool late = false;  // not finished by its deadline (asked + need)
  bool killed_while_saving = false;
  std::optional<int64_t> step;
  std::optional<double> duration_s;
  std::string path;
  std::string error;
  // What wrote it (the save_end record's "source": "transformers", "lightning", "loop"), ""
  // when the records do not say: `ladder` shows the resume command from it.
  std::string source;
  // Why it was not asked at a crossing (the last one): "no companion in the job", "projected
  // 0.8 s to the kill level, a save needs 10.0 s", ...
  Message not_asked;  // empty when every crossing asked
  // False when this guard could never ask (--pid without the job's step records): then
  // `not_asked` says why from the start, crossing or not.
  bool can_ask = true;
  std::optional<double> last_measured_s;  // the last save's duration the records gave
};
nlohmann::json CheckpointSummaryJson(const CheckpointSummary& summary);

// The decision at one reading, pure (tested on literal inputs).
struct CheckpointInputs {
  uint64_t available_bytes = 0;
  uint64_t warn_bytes = 0;
  uint64_t kill_bytes = 0;
  double fall_rate_bytes_per_s = 0;  // the kill policy's EWMA; <= 0: not falling
  bool triggered = false;            // the kill is under way
  bool armed = true;                 // no ask yet in this crossing
  bool have_target = false;          // some process can be asked
  double need_s = kDefaultCheckpointNeedSeconds;
};
enum class CheckpointVerdict : uint8_t { kNothing, kAsk, kTooLate, kNoCompanion };
struct CheckpointDecision {
  CheckpointVerdict verdict = CheckpointVerdict::kNothing;
  double projected_s = 0;  // +inf when memory is not falling
};
CheckpointDecision DecideCheckpoint(const CheckpointInputs& in);

// Whether a start record written at `record_mono_s` (CLOCK_MONOTONIC, the record's "mono")
// can come from the process that started `start_ticks` after boot (/proc/PID/stat field 22,
// `ticks_per_s` a second): not when it was written before that process existed, which is a
// record of an earlier process that had the same PID (records older than the guard: --pid,
// or a --step-records file that was already there). `boot_minus_mono_s`: CLOCK_BOOTTIME less
// CLOCK_MONOTONIC now (the time suspended), since field 22 counts suspended time too.
bool AnnouncedAfterStart(double record_mono_s, double boot_minus_mono_s, uint64_t start_ticks,
                         long ticks_per_s);

// What the guard loop read and decided at one reading, as the asker needs it.
struct CheckpointReading {
  double now_s = 0;
  uint64_t available_bytes = 0;
  uint64_t warn_bytes = 0;
  uint64_t kill_bytes = 0;
  double fall_rate_bytes_per_s = 0;  // the kill policy's EWMA
  bool triggered = false;            // the kill policy has fired
};

// The guard's side of it, called once per reading from the guard loop.
class CheckpointAsker {
 public:
  CheckpointAsker(const SysRoot& root, CheckpointOptions options, double start_s);
  // Reads new step records (at most every 250 ms, every reading while a save is awaited),
  // decides, and asks.
  void Tick(const CheckpointReading& reading, Child& child, GuardEvents& events);
  // Reads what is left of the records once the job is gone and returns the summary.
  CheckpointSummary Finish(GuardEvents& events);
  // The summary so far (what the readings have read), the job still running.
  const CheckpointSummary& summary() const { return sum_; }

 private:
  struct Target {
    int64_t pid = 0;
    std::optional<int> signal;
    bool request_file = false;
    double announced_mono_s = 0;  // the start record's "mono"
  };
  void Read(GuardEvents& events);
  void Ask(double now_s, uint64_t available, const CheckpointDecision& d, double need_s,
           Child& child, GuardEvents& events);
  double NeedSeconds() const;
  // The fall over the last second of readings (bytes/s), else `fallback`.
  double FallRate(double now_s, uint64_t available, double fallback);

  SysRoot root_;
  CheckpointOptions options_;
  CompanionTail tail_;
  double start_s_ = 0;
  double last_read_s_ = -1;
  double deadline_s_ = 0;
  bool armed_ = true;
  bool below_warn_ = false;
  bool said_not_asked_ = false;  // this crossing's "not asked" event is out
  bool triggered_ = false;
  bool wrote_request_ = false;  // the request file is this guard's (removed at the end)
  double asked_mono_s_ = 0;     // CLOCK_MONOTONIC when it asked: older save records are not it
  // Records already in the file when the guard began (--pid: the job's past): read at every
  // reading, not every 250 ms, until about backlog_bytes_ have been.
  uint64_t backlog_bytes_ = 0;
  uint64_t backlog_read_bytes_ = 0;
  std::vector<Target> targets_;
  std::deque<std::pair<double, uint64_t>> readings_;  // (time, MemAvailable), 100 ms apart
  CheckpointSummary sum_;
};

}  // namespace headroom
