// The guard: runs a job (or watches an existing process) and kills the whole job tree
// when MemAvailable falls below a level, so running out of memory ends the job, never the
// machine. See docs/guard.md for the behaviour and the measured reaction times.
//
// Data flow: Child::Spawn or Attach (guard/child.h: own session and process group, own cgroup
// where one can be made, the guard as child subreaper, a pidfd, the signal mask, spare
// descriptors) -> loop { read MemAvailable (pread of a kept-open /proc/meminfo) [+ PSI
// triggers, the group's verdict] -> KillPolicy::Decide (guard/kill_policy.h: the reason, the
// signal, every deadline, the next period) -> act (cgroup.kill or verified pidfds, SIGTERM
// escalating to SIGKILL on time; torchrun's workers first in a group) -> record (events,
// guard/guard_events.h) } -> summary.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/exit_status.h"
#include "base/message.h"
#include "base/result.h"
#include "guard/checkpoint_request.h"
#include "guard/group_end.h"
#include "guard/guard_events.h"
#include "sys/pool_levels.h"  // DefaultKillLevelBytes, for the guard's callers
#include "sys/sysroot.h"

namespace headroom {

class GuardGroup;  // guard/guard_group.h

struct GuardOptions {
  std::vector<std::string> command;   // run this, or
  std::optional<pid_t> attach_pid;    // guard an existing process and its descendants
  uint64_t min_available_bytes = 0;   // kill below this
  uint64_t warn_available_bytes = 0;  // one warning line per crossing below this
  std::chrono::milliseconds grace{3000};
  bool psi_kill = false;
  bool use_cgroup = true;
  int job_oom_score_adj = 800;
  // Extra environment for the job ("NAME=value"), e.g. the torch cap's PYTHONPATH.
  std::vector<std::string> extra_env;
  // The longest wait between two readings (never under 10 ms nor over 1 s; the period far
  // from the level is in guard/kill_policy.h). A sweep asks for 10 ms everywhere, because it
  // wants the peak, not only the crossing.
  std::chrono::milliseconds max_period{1000};
  // Ends the job (SIGTERM, SIGKILL after the grace) once it has run this long.
  std::optional<std::chrono::milliseconds> timeout;
  // Where the job's stdout and stderr go (-1: inherited). The guard does not close them.
  int stdout_fd = -1;
  int stderr_fd = -1;
  // The job's first process gets SIGKILL if the guard dies (PR_SET_PDEATHSIG), so a guard,
  // watch or sweep killed with SIGKILL does not leave its job running unguarded
  // (docs/guard.md, "Signals to the guard").
  bool kill_with_guard = true;
  // Called from the watch loop about every `tick_period` with the latest reading (for a
  // progress line); must be quick.
  std::function<void(uint64_t available_bytes, double elapsed_s)> on_tick;
  std::chrono::milliseconds tick_period{250};
  // Also read the free pages parked on per-CPU lists (sys/zoneinfo.h) at every poll, for a
  // peak that MemAvailable alone would understate by up to their size. The kill decision
  // stays on MemAvailable, the kernel's own figure.
  bool count_per_cpu_free = false;
  // The guard group this node belongs to (guard/guard_group.h), not owned; none: alone.
  GuardGroup* group = nullptr;
  // Checkpoint before the kill (guard/checkpoint_request.h): read the companion's step records
  // and ask it to save at the warning level when the projection leaves time.
  std::optional<CheckpointOptions> checkpoint;
};

struct GuardSummary {
  bool killed = false;                  // the guard killed the job
  bool timed_out = false;               // the job ran past GuardOptions::timeout and was ended
  std::optional<int> forwarded_signal;  // the first INT/TERM/HUP the guard passed to the job
  std::string kill_reason;              // "memavailable", "projected", "psi"
  // "SIGTERM", "SIGTERM, SIGKILL after grace", "SIGTERM, SIGKILL at the level" (the job kept
  // filling the pool after SIGTERM), "SIGKILL at once"
  std::string signal_path;
  int exit_status = 0;  // what `headroom guard` exits with
  std::optional<int> job_exit_code;
  std::optional<int> job_signal;
  double duration_s = 0;
  uint64_t mem_total_bytes = 0;
  uint64_t start_available_bytes = 0;
  uint64_t lowest_available_bytes = 0;
  uint64_t peak_pool_use_bytes = 0;  // MemTotal - lowest MemAvailable
  // The tree's RSS summed every 250 ms (60 s far from the level), or the largest single
  // process's own peak (ru_maxrss as it is reaped), whichever is larger.
  uint64_t peak_tree_rss_bytes = 0;
  // With count_per_cpu_free: MemAvailable + per-CPU free pages, at the start and lowest.
  std::optional<uint64_t> start_effective_available_bytes;
  std::optional<uint64_t> lowest_effective_available_bytes;
  std::optional<uint64_t> cgroup_peak_bytes;
  std::optional<uint64_t> trigger_available_bytes;
  // The kill for memory (guard/kill_line.h): the level it crossed, the fall rate then, and for
  // "projected" the time the projection gave to the level.
  uint64_t kill_level_bytes = 0;
  std::optional<double> fall_rate_bytes_per_s;
  std::optional<double> projected_s;
  // After a kill: the job's own peak from its companion's step records, where it wrote any
  // (samples/companion_records.h PeakFromRecords), and the next step (kill_line.h).
  std::optional<uint64_t> records_peak_bytes;
  std::string next_step;
  std::optional<double> crossing_to_signal_ms;
  // The longest wait between two of the guard's readings from its trigger on, in ms: near
  // the level it reads every few ms, so a long one says the guard was not scheduled (a
  // loaded or overcommitted machine), which is what an overshoot then comes from.
  std::optional<double> longest_gap_after_trigger_ms;
  std::optional<double> crossing_to_empty_ms;
  std::optional<uint64_t> available_after_bytes;  // right after the tree emptied
  std::string cgroup;  // where the job's cgroup was, or why there is none
  // Privileges it lacked, degradations: EnglishText for the events file and the journal's
  // summary_json, the translating renderer for the terminal.
  std::vector<Message> notes;
  uint64_t warnings = 0;
  uint64_t polls = 0;
  bool say_failed = false;  // a warning line could not be written (the note says so once)
  // The guard group ended this job (a peer's end); nullopt when it did not.
  std::optional<GroupEnd> group_end;
  std::optional<CheckpointSummary> checkpoint;  // with GuardOptions::checkpoint
};

// Where the guard's one-line warnings go as it runs (the caller renders them: the terminal
// in the user's language); none: nowhere. Returns false when the line could not be written
// (a closed pipe, a full disk): the guard carries on and says so in a note.
using GuardSay = std::function<bool(const Message& line)>;

// Runs the guard to the end. Errors (exit 2): the command cannot be run, the PID does not
// exist, /proc/meminfo cannot be opened. The events file is written in English.
Result<GuardSummary> RunGuard(const SysRoot& root, const GuardOptions& options, GuardEvents& events,
                              const GuardSay& say);

// The summary as the journal's summary_json and `guard --json` hold it (schema_version 1),
// notes in English; `level` and `warn` are the kill and warning levels it ran with.
nlohmann::json GuardSummaryJson(const GuardSummary& summary, uint64_t level, uint64_t warn);

// Processes that usually hold the pool (ray::, vllm, ollama, python with torch loaded),
// for --require-available's refusal; read-only.
struct Leftover {
  pid_t pid = 0;
  std::string what;  // "vllm", "python (torch loaded)", ...
  std::string cmdline;
  uint64_t rss_bytes = 0;
};
std::vector<Leftover> FindLeftovers(const SysRoot& root);

}  // namespace headroom
