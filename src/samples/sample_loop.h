// SampleLoop: `headroom watch`'s sampling, one Sampler reading per interval into one samples
// CSV row and the events it starts (docs/watch.md). The CSV and the events' JSON lines are
// data, English by construction; what a person sees (an event as it happens, the first
// failed write) goes to the caller's callbacks, which print it in the user's language.
//
// Run paces itself on the monotonic clock: a slot missed (a slow sample, a stopped process)
// is skipped, never made up in a burst. It waits in poll() on `stop_fd`, so a signalfd or the
// read end of a pipe ends the loop at once, never with a row half-written.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/durable_lines.h"
#include "base/result.h"
#include "base/wall_time.h"
#include "samples/sample_events.h"
#include "samples/sampler.h"
#include "samples/samples_csv.h"

namespace headroom {

struct SampleLoopSinks {
  std::function<void(const SampleEvent&)> on_event;  // each event, as it is detected
  std::function<void(const Error&)> on_write_error;  // the first row that could not be written
};

// Used by one thread at a time.
class SampleLoop {
 public:
  // `events`: where each event's JSON line goes (--events), or nullptr.
  SampleLoop(Sampler& sampler, SamplesCsvWriter& csv, DurableLines* events, SampleLoopSinks sinks);

  // One reading now: a row, then its events.
  void SampleOnce();
  // Samples every `interval`, the first at once, until `stop_fd` is readable.
  void Run(std::chrono::milliseconds interval, int stop_fd);

 private:
  Sampler& sampler_;
  SamplesCsvWriter& csv_;
  SampleEventDetector detector_;
  DurableLines* events_;
  SampleLoopSinks sinks_;
  bool write_failed_ = false;
};

// Samples every `interval` until SIGINT, SIGTERM or SIGHUP: they are blocked in the calling
// thread (and stay so) and waited for on a signalfd, so a signal ends the wait, never a row
// half-written. The signal's number, 0 when the wait ended without one. Error: no signalfd.
Result<int> SampleUntilSignal(SampleLoop& loop, std::chrono::milliseconds interval);

// The shortest --interval: a full sample costs well under 1 ms (bench/sampler_cost.cc), but
// NVML's power is a 1 s average and its utilization a 1/6-1 s window: faster rows repeat them.
inline constexpr std::chrono::milliseconds kMinSampleInterval{100};

// --interval's text (or the configured one): a duration (base/duration.h), at least
// kMinSampleInterval. An error names --interval.
Result<std::chrono::milliseconds> ParseSampleInterval(std::string_view text);

// The samples file's header for what `sampler` reads, started at `started`: `host` ("unknown"
// when empty), the GPU's name ("none" without one), the platform, the interval, the
// sampler's extra columns, and `notes` as "# note:" lines.
SamplesHeader SamplesHeaderFor(const Sampler& sampler, std::chrono::milliseconds interval,
                               std::string host, std::vector<std::string> notes, WallTime started);

}  // namespace headroom
