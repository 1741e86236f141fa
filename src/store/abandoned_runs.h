// Runs that `history` shows as abandoned: the journal still holds them as "running" because
// the process recording them (a guard, a watch, a sweep) died without finishing them (SIGKILL,
// a crash, a power cut), and nothing will ever finish them. A run whose "start" record
// (guard/guard_record.h; docs/journal.md) names a process on this host that is no longer alive
// with the recorded start time is shown "abandoned" when read, as `top` tells its live
// guards (top/running_guards.h). Nothing is written: a reader's view, not a repair. A run
// without a record (a watch without --guard, or a run from an older headroom) stays
// "running": its process is not known.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/journal.h"
#include "sys/sysroot.h"

namespace headroom {

inline constexpr std::string_view kAbandonedStatus = "abandoned";

// The process a run's "start" event names: {"guard_pid", "guard_start_ticks", "host", ...}.
struct RunOwner {
  pid_t pid = 0;
  std::optional<uint64_t> start_ticks;  // null in the record when it could not be read
  std::string host;                     // empty when the recorder had no host name
};

// The owner from a "start" event's data; nullopt when it names none (not JSON, no positive
// guard_pid).
std::optional<RunOwner> ParseRunOwner(std::string_view start_data_json);

// Whether a process with this PID (and start time, when known) is alive.
using ProcessAliveCheck = std::function<bool(pid_t pid, std::optional<uint64_t> start_ticks)>;

// proc/PID/stat below `root` exists, is not a zombie, and has `start_ticks` when given.
bool ProcessAlive(const SysRoot& root, pid_t pid, std::optional<uint64_t> start_ticks);

// What `history` shows for `run`: its status, or "abandoned" for a "running" run whose newest
// owner (`events`: the run's events) is of this host (or of none recorded) and not alive.
std::string ShownRunStatus(const RunRow& run, const std::vector<EventRow>& events,
                           std::string_view this_host, const ProcessAliveCheck& alive);

// ShownRunStatus for each "running" run of `runs`, its events read from `journal`; a run whose
// events cannot be read keeps its status.
void MarkAbandonedRuns(Journal& journal, std::vector<RunRow>& runs, std::string_view this_host,
                       const ProcessAliveCheck& alive);

}  // namespace headroom
