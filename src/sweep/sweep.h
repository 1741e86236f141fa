// `headroom sweep`'s driver: grid + template -> for each trial: settle, guard(trial), peak
// -> search (fit, skip, refine) -> next trial or stop -> rows for the results table. Every
// finished trial goes to the journal before the next starts, and a rerun with the same
// sweep key replays them instead of running them again (docs/sweep.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/exit_status.h"
#include "base/message.h"
#include "base/result.h"
#include "guard/guard.h"
#include "guard/guard_record.h"
#include "store/journal.h"
#include "sweep/grid.h"
#include "sweep/search.h"
#include "sweep/start.h"
#include "sweep/trial.h"
#include "sys/sysroot.h"

namespace headroom {

// The sweep's clock: settle waits and trial timestamps on the monotonic clock. The real one
// is steady_clock and sleep_for; sweep_test.cc passes a fake that moves when it sleeps.
class SweepClock {
 public:
  virtual ~SweepClock() = default;
  virtual std::chrono::steady_clock::time_point Now() = 0;
  virtual void SleepFor(std::chrono::milliseconds duration) = 0;
};

// Runs one trial to its end: RunTrial (sweep/trial.h) unless a test passes its own.
using TrialRunner = std::function<Result<TrialRun>(const SysRoot& root, const TrialSpec& spec)>;

struct SweepOptions {
  Grid grid;
  std::vector<std::string> command;  // the template, with {placeholders}
  uint64_t limit_bytes = 0;          // peak pool use a trial may reach
  // --device-limit (docs/sweep.md "On a discrete GPU"): limit_bytes is the device's pool, the
  // trials are judged by their step records' allocator peak, and the device starts empty.
  bool device_limit = false;
  uint64_t margin_bytes = 0;
  uint64_t min_available_bytes = 0;  // the guard's kill level in every trial
  bool bisect = true;
  int max_trials = 30;  // launched trials, counting those of earlier runs
  std::optional<std::chrono::milliseconds> trial_timeout;
  std::chrono::milliseconds grace{3000};
  // Between trials: wait until MemAvailable is back within `settle_tolerance_bytes` of the
  // pre-sweep baseline, at most `settle_timeout` (then a warning, and on).
  uint64_t settle_tolerance_bytes = 0;
  std::chrono::milliseconds settle_timeout{60000};
  bool fresh = false;             // ignore an earlier run of the same sweep
  std::filesystem::path log_dir;  // trial logs go to <log_dir>/<run id>/
  std::string model, method;      // labels for plan's measured anchors (optional)
  // --start (sweep/start.h): the first knob's first trial, and with --start plan what plan
  // said, kept in the journal's summary beside the answer. None: the knob's doubling from LO.
  std::optional<SweepStart> start;
  // Written to the run as its "start" record once it is begun or resumed, so `headroom top`
  // shows the sweep's kill level while it lasts (guard/guard_record.h; the cli fills it with
  // ThisGuardStart). None: no record.
  std::optional<GuardStartRecord> guard_start;
  // The seams (none: RunTrial and the real clock).
  TrialRunner run_trial;
  SweepClock* clock = nullptr;
};

// The identity of a sweep: what must match for a rerun to resume it (template, grid,
// limit, margin, bisection). Canonical JSON.
std::string SweepKey(const SweepOptions& options);

struct SweepRow {
  Config config;
  TrialOutcome outcome = TrialOutcome::kOk;
  std::optional<uint64_t> peak_bytes;  // the trial's own peak above its baseline
  std::string peak_measure;  // "step-records", "memavailable", "device-allocator", ... ("" from
                             // the journal)
  std::optional<int64_t> headroom_bytes;  // limit - pool peak
  std::string notes;
  bool from_journal = false;
  // For trials launched now: the pool use it started from and the model's prediction (the
  // search launched it because start + prediction + margin <= limit).
  std::optional<uint64_t> start_pool_bytes;
  std::optional<uint64_t> predicted_peak_bytes;
  // The guard's other measures of the trial: the job tree's peak RSS (sampled every 250 ms;
  // GPU memory on unified memory is not in it) and the job cgroup's peak, where one exists.
  std::optional<uint64_t> peak_rss_bytes;
  std::optional<uint64_t> cgroup_peak_bytes;
};

struct SweepResult {
  int64_t run_id = 0;
  bool resumed = false;
  int reused = 0;          // finished trials replayed from the journal
  int launched = 0;        // trials launched by this invocation
  int launched_total = 0;  // with those of earlier invocations
  std::vector<SweepRow> rows;
  std::optional<Config> best;
  std::optional<uint64_t> best_peak_bytes;
  std::optional<int64_t> best_headroom_bytes;
  std::vector<std::string> stop_reasons;  // one per knob, from the search
  std::vector<UntriedGap> untried;        // values an error stopped the search short of
  // The noise of a peak reading as the sweep measured it: the largest wobble of idle
  // MemAvailable over a settle's still half second, at least 16 MiB
  // (SearchOptions::noise_bytes).
  uint64_t noise_bytes = 0;
  std::string stopped_early;  // "--max-trials 30 reached", "interrupted by signal 2"
  std::vector<std::string> warnings;
  std::filesystem::path trial_log_dir;
  // 0 an answer, 1 no config fits (or none finished), 4 an answer with values untried below a
  // non-memory failure, 130 interrupted.
  int exit_status = 0;
};

// Progress lines: on a terminal one line rewritten in place, otherwise plain lines (a
// trial's start and end, and every 10 s while it runs).
struct SweepProgress {
  std::FILE* file = nullptr;
  bool terminal = false;
  // How a line is rendered (the cli passes its translating renderer); none: EnglishText.
  std::string (*render)(const Message& line) = nullptr;
};

// "batch 5 passed; 6..23 untried: batch 24 failed (exit status 1: ...), not memory" (English:
// the journal and --json keep it; the terminal shows the same line translated).
Message UntriedText(const UntriedGap& gap);

Result<SweepResult> RunSweep(const SysRoot& root, const SweepOptions& options, Journal& journal,
                             const SweepProgress& progress);

// Sends SIGTERM to each leftover (by a pidfd checked against its start time), waits up to
// `grace` for them to go, then SIGKILL. What was done, a line per process.
std::vector<Message> SignalLeftovers(const SysRoot& root, const std::vector<Leftover>& leftovers,
                                     std::chrono::milliseconds grace);

}  // namespace headroom
