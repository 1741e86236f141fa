// `headroom watch -- CMD`'s orchestration: the job runs under RunGuard on the calling thread
// while the sampling loop runs on a thread of its own and, with a log, the tee on another
// (docs/watch.md). Nothing here prints: the guard's lines go to the caller's `say`.
//
// Both threads start with INT/TERM/HUP/CHLD/PIPE blocked, so the guard's signalfd gets
// every signal and a closed terminal gives the tee EPIPE instead of killing watch; the
// calling thread's mask is left as it was (the job inherits the mask RunGuard is called
// with). The job holds the pipes' write ends; they are closed here after RunGuard returns
// (the job tree is then empty), so the tee reads to EOF.
#pragma once

#include <chrono>
#include <string>

#include "base/durable_lines.h"
#include "base/result.h"
#include "guard/guard.h"
#include "samples/sample_loop.h"
#include "sys/sysroot.h"

namespace headroom {

struct WatchedJobIo {
  int out_fd = -1;  // with a log: where the job's stdout bytes go through (the terminal)
  int err_fd = -1;  // and its stderr bytes
  // Where the guard appends its events as JSON lines ("" for nowhere): watch's --events,
  // which the sampling loop writes too, a line at a time.
  std::string events_path;
};

// The sampling beside the job: `loop` samples every `interval`.
struct WatchedJobSampling {
  SampleLoop& loop;
  std::chrono::milliseconds interval;
};

// Runs `options.command` to its end: sampled every `interval` by `loop` (and once more
// after the job), its output teed to `log` when there is one (options' stdout_fd and
// stderr_fd are then the pipes'). Error: a pipe could not be made, or RunGuard's own.
Result<GuardSummary> RunWatchedJob(const SysRoot& root, GuardOptions options,
                                   WatchedJobSampling sampling, DurableLines* log,
                                   const WatchedJobIo& io, const GuardSay& say);

}  // namespace headroom
