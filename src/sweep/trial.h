// One sweep trial: the filled command run under the guard with a 10 ms watch period, its
// output kept in a log file, its peak pool use measured above the pre-trial baseline, and
// its outcome classified. ClassifyTrial and FindOomMessage are pure, for the tests.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/message.h"
#include "base/result.h"
#include "guard/guard.h"
#include "store/journal.h"
#include "sys/sysroot.h"

namespace headroom {

// What a finished trial left to classify it by.
struct TrialFacts {
  bool killed_by_guard = false;
  bool timed_out = false;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::optional<std::string> oom_message;  // a line of the output that reports an OOM
  uint64_t kernel_oom_kills = 0;           // /proc/vmstat oom_kill, during the trial
  uint64_t peak_pool_bytes = 0;            // MemTotal - lowest MemAvailable
  uint64_t limit_bytes = 0;
};

// ok, over-limit (ran to the end, but its peak passed the limit), killed-by-guard, oom (the
// job's own: an out-of-memory message in its output, or a SIGKILL while the kernel's OOM
// killer fired), timeout, error (any other failure: never called an OOM).
TrialOutcome ClassifyTrial(const TrialFacts& facts);

// The first line of `output` that reports running out of memory (CUDA, PyTorch, Python,
// C++, JAX/XLA, the C library), trimmed to 200 characters; nullopt when none does.
std::optional<std::string> FindOomMessage(std::string_view output);

// The value of `key` in /proc/vmstat text ("oom_kill 3"); nullopt when absent.
std::optional<uint64_t> ParseVmstatValue(std::string_view text, std::string_view key);

struct TrialSpec {
  std::vector<std::string> command;  // placeholders already filled
  uint64_t min_available_bytes = 0;  // the guard's kill level
  uint64_t limit_bytes = 0;
  std::chrono::milliseconds grace{3000};
  std::optional<std::chrono::milliseconds> timeout;
  std::filesystem::path log_path;  // the trial's stdout and stderr, appended
  std::function<void(uint64_t available_bytes, double elapsed_s)> on_tick;
  // Where the companion's step records go (HEADROOM_STEP_RECORDS, emptied before the trial);
  // "" for log_path + ".steps.jsonl".
  std::filesystem::path step_records_path;
  // --device-limit (docs/sweep.md "On a discrete GPU"): limit_bytes is the device's pool, and
  // the trial is judged by the torch allocator peak of its step records ("device-allocator"),
  // not by the host; a trial whose records carry no allocator figure is an error.
  bool device_limit = false;
};

struct TrialRun {
  TrialOutcome outcome = TrialOutcome::kError;
  GuardSummary guard;
  uint64_t baseline_available_bytes = 0;  // MemAvailable just before the launch
  uint64_t peak_bytes = 0;                // what the trial is judged by (sweep/trial_peak.h)
  uint64_t peak_pool_bytes = 0;           // pool use before it + peak_bytes, or more
  // Which reading peak_bytes is (docs/sweep.md "Peak"): "cgroup", "tree-rss", "step-records"
  // (the job's own), or "memavailable" (the pool's fall, when it read more or nothing else
  // did); under --device-limit "device-allocator", or "none" when the records had none.
  std::string peak_measure = "memavailable";
  std::optional<uint64_t> own_peak_bytes;  // the job's own reading, when there was one
  std::string own_peak_measure;
  uint64_t pool_fall_bytes = 0;  // baseline - lowest MemAvailable
  Message notes;  // why, in a phrase: "exit status 1: ValueError: ..."; empty when ok
};

// Runs one trial to its end. Error: the command cannot be started or the log not opened.
Result<TrialRun> RunTrial(const SysRoot& root, const TrialSpec& spec);

}  // namespace headroom
