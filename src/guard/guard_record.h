// What a running guard leaves in the journal for other processes to read: the "start"
// event of its run, with the guard's own pid and start time (its identity: a pid alone may
// be reused), the host it runs on and its levels. `headroom top` shows the levels of the
// guarded runs whose guard is still alive; before this record the levels were written only
// at the end of the run (the summary) or into a --events file no one else knew the path of.
//
// Three commands guard and write it: `headroom guard` (its run), `headroom watch --guard`
// (the watch run) and `headroom sweep` (the sweep run, once per start or resume: its trials
// are guarded in the sweep's own process, at its kill level and with no warning level, 0).
//
// Event data (a JSON object in events.data_json, docs/journal.md):
//   {"guard_pid": 4242, "guard_start_ticks": 123456, "host": "spark-1",
//    "kill_below_bytes": 10453460582, "warn_below_bytes": 20906921164}
// guard_start_ticks is field 22 of /proc/PID/stat (clock ticks after boot), null when it
// could not be read; host is empty when gethostname failed.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "store/recorded_run.h"
#include "sys/sysroot.h"

namespace headroom {

// The journal event type of the record (a guard run's events table).
inline constexpr std::string_view kGuardStartEvent = "start";

struct GuardStartRecord {
  pid_t guard_pid = 0;
  std::optional<uint64_t> guard_start_ticks;
  std::string host;
  uint64_t kill_below_bytes = 0;
  uint64_t warn_below_bytes = 0;
  // The companion's step records the job writes (docs/companion.md), "" when none: what
  // `headroom export` reads for the guarded job's step count (docs/export.md).
  std::string step_records;
};

// The record as the event's data, a JSON object.
std::string GuardStartJson(const GuardStartRecord& record);

// The record from an event's data; nullopt when it is not one (not JSON, a field missing or
// of the wrong type, a pid that is not positive). Unknown fields are ignored.
std::optional<GuardStartRecord> ParseGuardStartJson(std::string_view data_json);

// This machine's name (gethostname), empty when it cannot be had.
std::string LocalHostName();

// This process's record, guarding at these levels: its pid, its start time from
// `real_root`'s /proc (the real one, never a fixture tree: the record names this process),
// the host name.
GuardStartRecord ThisGuardStart(const SysRoot& real_root, uint64_t kill_below_bytes,
                                uint64_t warn_below_bytes);

// Adds `record` to `run` as its "start" event. A reader takes a run's newest record (a
// resumed sweep writes another, from its new process).
Result<int64_t> RecordGuardStart(RecordedRun& run, const GuardStartRecord& record);

}  // namespace headroom
