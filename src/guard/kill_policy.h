// The guard's decisions, as pure functions of what the watch loop knows (docs/guard.md,
// "Behaviour"): from the guard's state, one reading and the options, whether to signal the
// job tree (and why), and how long to sleep before the next reading. No clock, no I/O: the
// loop in guard/guard.cc reads, asks, acts and records; kill_policy_test.cc feeds literal
// readings. After earlyoom's `lowmem_sig` and `sleep_time_ms` (main.c).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace headroom {

// The fastest fill the period far from the level is sized against, bytes per second.
// 20 GB/s: the fastest fill measured on this project's machines was 16.6 GB/s (the balloon,
// THP pages, unthrottled; docs/guard-benchmark.md), and 20 GB/s is the floor the guard has
// always assumed. Faulting memory in runs far below the GB10's 273 GB/s spec (180-192 GB/s
// measured in copy tests): every new page is zeroed by the kernel, one page at a time.
inline constexpr double kCredibleFillBytesPerSecond = 20e9;

// A fall faster than this, bytes per second, counts as near the level wherever MemAvailable
// is: the policy polls every 10 ms and the guard samples the tree's RSS at its near rate.
inline constexpr double kFastFallBytesPerSecond = 1e9;

struct KillPolicyOptions {
  uint64_t min_available_bytes = 0;  // the kill level
  std::chrono::milliseconds grace{3000};
  // The longest sleep the caller allows (a sweep asks 10 ms everywhere); never under 10 ms.
  std::chrono::milliseconds max_period{1000};
  std::optional<std::chrono::milliseconds> timeout;  // end the job once it has run this long
  // With a progress callback, the longest sleep is also its period, so ticks keep coming.
  std::optional<std::chrono::milliseconds> tick_period;
};

// What the loop carries from one reading to the next. Times are seconds on the monotonic
// clock, as the loop reads it.
struct GuardState {
  double start_s = 0;
  uint64_t last_available_bytes = 0;  // the reference reading: the last that made a rate
  double last_reading_s = 0;
  double fall_rate_bytes_per_s = 0;      // EWMA; negative while memory comes back
  std::chrono::milliseconds period{10};  // the sleep that ended at this reading
  bool triggered = false;                // a memory reason fired (the job is being killed)
  bool timed_out = false;                // the timeout fired
  bool cleanup = false;                  // SIGTERM without a memory reason (timeout, leftovers)
  bool killed_hard = false;              // SIGKILL sent
  double deadline_s = 0;                 // SIGKILL once reached, after a SIGTERM
  double term_s = 0;                     // when that SIGTERM went
  uint64_t term_available_bytes = 0;     // MemAvailable at a memory reason's SIGTERM
  int64_t last_fall_bytes = 0;           // how far the last reading fell below the one before
  // INT, TERM, HUP or QUIT sent to the guard and passed on to the job: how many, the first.
  int forwards = 0;
  double first_forward_s = 0;
  // In a guard group, torchrun's workers got the signal first: the rest of the tree (the
  // agent) gets SIGTERM at this time (kTermRest); 0: nothing pending.
  double term_rest_s = 0;
};

// One reading, taken by the loop after each sleep.
struct GuardReading {
  double now_s = 0;
  uint64_t available_bytes = 0;  // MemAvailable (the last good one when a read failed)
  bool psi_full = false;         // the --psi-kill trigger fired during the sleep
  bool job_running = true;       // the job itself (not its leftovers) is alive
  // Only read once the job is gone: whether anything of its tree is left.
  bool tree_empty = false;
};

enum class GuardAction {
  kNone,      // nothing to do: sleep `next_period`
  kTrigger,   // a memory reason: SIGTERM, or SIGKILL at once when severe
  kTimeout,   // the job ran past the timeout: SIGTERM
  kCleanup,   // the job exited and left processes behind: SIGTERM
  kEscalate,  // SIGTERM went out and the grace ran out, memory fell below half the level, the
              // job kept filling the pool up to the level, or the guard was asked twice: SIGKILL
  kDone,      // the job is gone and its tree is empty
  kTermRest,  // in a guard group: the workers went first and the grace ran out; SIGTERM for
              // the rest of the tree (the agent), docs/guard-group.md "Ending a node's job"
};

struct KillDecision {
  GuardAction action = GuardAction::kNone;
  int signal = 0;  // SIGTERM or SIGKILL; 0 for kNone and kDone
  // kTrigger: "memavailable", "projected" or "psi"; kEscalate: "grace", "half" (below half
  // the level), "crossing" (still filling at the level) or "repeated" (a second signal to
  // the guard once the grace since the first ran out). The events' and the summary's words.
  std::string_view reason;
  bool severe = false;  // kTrigger with SIGKILL at once
  std::chrono::milliseconds next_period{10};
};

struct KillPolicy {
  // Folds a reading into the fall rate (an EWMA, alpha 0.5: two readings dominate). A
  // reading less than 5 ms after the last one that made a rate changes nothing: the rate is
  // always taken over at least that long, from that reference reading.
  static void Observe(GuardState& state, const GuardReading& reading);
  // The next thing to do. The loop acts on it, calls Apply, and asks again until kNone
  // (whose next_period is the sleep) or kDone: one reading can call for a trigger and, with
  // no grace, its escalation.
  static KillDecision Decide(const GuardState& state, const GuardReading& reading,
                             const KillPolicyOptions& options);
  // The guard was sent INT, TERM, HUP or QUIT at `now_s` and passed it on to the job. A
  // second one, once the grace since the first has run out, calls for SIGKILL.
  static void Forwarded(GuardState& state, double now_s);
  // The guard group ended this node's job at `now_s` (a peer's end for memory, its failure or
  // its loss), and SIGTERM went out: to the whole tree (SIGKILL when the grace ends), or with
  // `workers_first` to torchrun's workers alone (the rest of the tree gets SIGTERM when the
  // grace ends, kTermRest, and SIGKILL comes at twice the grace).
  static void GroupEnded(GuardState& state, double now_s, bool workers_first,
                         const KillPolicyOptions& options);
  // A memory trigger in a guard group signalled torchrun's workers alone at `now_s` (after
  // Apply): the rest of the tree gets SIGTERM when the grace ends (kTermRest).
  static void WorkersFirst(GuardState& state, double now_s, const KillPolicyOptions& options);
  // The state after the loop acted on `decision` at `reading`.
  static void Apply(GuardState& state, const KillDecision& decision, const GuardReading& reading,
                    const KillPolicyOptions& options);
  // The sleep after this reading (also in every decision's next_period).
  static std::chrono::milliseconds NextPeriod(const GuardState& state, const GuardReading& reading,
                                              const KillPolicyOptions& options);
};

}  // namespace headroom
