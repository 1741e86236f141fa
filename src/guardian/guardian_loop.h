// `headroom guardian`'s loop (docs/guardian.md "Behaviour"): one reading of MemAvailable per
// period, the guard's KillPolicy (guard/kill_policy.h: the level, the projection, the period
// far from the level) decides, and the loop acts: it chooses the victim (victim_choice.h),
// reads MemAvailable again before each signal (nothing is ended when memory came back while
// it chose), sends SIGTERM to the job's processes through pidfds, SIGKILL after the grace or
// at once when the policy says the level will be crossed first, process_mrelease after a
// SIGKILL, and says when MemAvailable does not come back once the victim is gone.
//
// What the loop reads and where its events go are callbacks (GuardianIo), so tests drive it
// with literal readings against real processes; the CLI passes /proc, NVML and the journal.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/message.h"
#include "guard/kill_policy.h"
#include "guardian/victim_choice.h"
#include "sys/sysroot.h"

namespace headroom {

struct GuardianOptions {
  uint64_t min_available_bytes = 0;   // the kill level
  uint64_t warn_available_bytes = 0;  // 0: no warning
  std::chrono::milliseconds grace{3000};
  bool dry_run = false;               // decide and report, signal nothing
  bool release_driver_pools = false;  // drop the page cache when memory does not come back
  ChoiceOptions choice;               // guard_pids is filled at each choice
};

// A guard that `top`'s registry says is running: its pid and its kill level.
struct LiveGuard {
  pid_t pid = 0;
  uint64_t kill_below_bytes = 0;
};

// One thing the guardian did or saw. `type`: "warn", "choice" (a --dry-run decision),
// "kill" (SIGTERM or SIGKILL to the victim), "escalate" (SIGKILL after SIGTERM), "recovered"
// (memory came back while choosing: nothing ended), "no-victim", "ended" (the victim is
// gone), "driver-pools" (it is gone and MemAvailable did not come back).
struct GuardianEvent {
  std::string type;
  Message line;                   // one line for people
  nlohmann::ordered_json fields;  // the event's data, English, for files
};

struct GuardianIo {
  std::function<double()> now_s;                            // the monotonic clock
  std::function<std::optional<uint64_t>()> read_available;  // MemAvailable, bytes
  std::function<std::map<pid_t, uint64_t>()> read_gpu;      // NVML: pid -> GPU bytes
  std::function<std::vector<LiveGuard>()> live_guards;      // the running guards
  std::function<void(const GuardianEvent&)> emit;
  // Writes 3 to vm/drop_caches; false when it could not. Only called with
  // release_driver_pools.
  std::function<bool()> drop_caches;
  // --psi-kill: whether the full-pressure trigger fired since the last step; unset: never.
  std::function<bool()> psi_full;
};

// Counts for the summary and the exporter.
struct GuardianCounts {
  int64_t kills = 0;        // victims signalled
  int64_t escalations = 0;  // SIGKILL after SIGTERM
  int64_t warnings = 0;
  int64_t recovered = 0;  // triggers that ended nothing because memory came back
  int64_t no_victim = 0;
  int64_t driver_pools = 0;
};

class GuardianLoop {
 public:
  GuardianLoop(SysRoot root, GuardianOptions options, GuardianIo io);
  ~GuardianLoop();
  GuardianLoop(const GuardianLoop&) = delete;
  GuardianLoop& operator=(const GuardianLoop&) = delete;

  // One reading and whatever it calls for; the sleep before the next.
  std::chrono::milliseconds Step();
  // New levels and grace (SIGHUP re-read the configuration); the scope and patterns stay.
  void Reconfigure(uint64_t min_available_bytes, uint64_t warn_available_bytes,
                   std::chrono::milliseconds grace);
  // The choice the loop would make now (also what Step uses).
  VictimChoice ChooseNow();
  const GuardianCounts& counts() const { return counts_; }

 private:
  struct Victim {
    Job job;
    std::map<pid_t, int> pidfds;  // -1: no pidfd (an old kernel), signalled by pid
    double signalled_s = 0;
    uint64_t available_at_signal = 0;
  };
  void OnTrigger(const KillDecision& d, const GuardReading& r);
  void Signal(int signal);
  bool MemberAlive(pid_t pid) const;
  void OnVictimGone(const GuardReading& r);
  void CheckRecovery(const GuardReading& r);
  std::set<pid_t> TrustedGuards(uint64_t available, double now_s);
  void Emit(std::string type, Message line, nlohmann::ordered_json fields);
  void CloseVictim();

  SysRoot root_;
  GuardianOptions options_;
  GuardianIo io_;
  KillPolicyOptions policy_;
  GuardState state_;
  std::optional<Victim> victim_;
  GuardianCounts counts_;
  bool warned_ = false;
  double hold_until_s_ = 0;  // no new choice before (after a dry run, no victim, recovery)
  // Just after a victim ended: until when a trigger ends a second job only below the reading
  // at the victim's end by kSecondFillBytes (guardian_loop.cc).
  double settle_until_s_ = 0;
  uint64_t settle_from_bytes_ = 0;
  // After a victim is gone: until when MemAvailable is watched for its return.
  double recovery_until_s_ = 0;
  uint64_t recovery_freed_bytes_ = 0;  // what the victim held
  std::map<pid_t, double> guard_below_since_s_;
};

}  // namespace headroom
