// Which guards are running now, and at which levels: the journal's guard runs with status
// "running" whose "start" record (guard/guard_record.h) names a guard process that is alive
// on this host. A run stays "running" in the journal when its guard was SIGKILLed or the
// machine lost power, so the status alone would show stale levels for ever: the guard's
// pid must exist below the root with the start time recorded (a reused pid has another),
// and the record's host must be this one (a journal in a shared home directory sees
// other machines' runs).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/journal.h"
#include "sys/sysroot.h"
#include "top/top_model.h"

namespace headroom {

// Whether a process with this pid (and start time, when known) is alive.
using GuardAliveCheck = std::function<bool(pid_t pid, std::optional<uint64_t> start_ticks)>;

// The running guards among `runs` (newest first, as RunningRuns gives them), reading each
// candidate's events through `events_of`. Pure: the journal and /proc come in as callbacks.
std::vector<RunningGuard> FindRunningGuards(
    const std::vector<RunRow>& runs,
    const std::function<std::vector<EventRow>(int64_t run_id)>& events_of, std::string_view host,
    const GuardAliveCheck& alive);

// proc/PID/stat below `root` exists, is not a zombie, and (when `start_ticks` is given)
// has that start time.
bool GuardProcessAlive(const SysRoot& root, pid_t pid, std::optional<uint64_t> start_ticks);

// Reads the running guards from a journal file, read-only, keeping the connection open
// between reads. A journal that does not exist yet is no guard and no error: a guard that
// starts later creates it, and the next read opens it.
class RunningGuardReader {
 public:
  RunningGuardReader(std::filesystem::path journal_path, SysRoot root, std::string host);

  // The running guards; `note` gets why none could be read (an unreadable journal), or "".
  std::vector<RunningGuard> Read(std::string& note);

 private:
  std::filesystem::path path_;
  SysRoot root_;
  std::string host_;
  std::optional<Journal> journal_;
};

}  // namespace headroom
