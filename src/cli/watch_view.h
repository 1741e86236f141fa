// `headroom watch` on stderr, in the user's language: an event as it happens, a failed
// write, where the run is recorded, and the last line (stopped, or how the job ended). The
// samples CSV and the events' JSON lines are the library's, English by construction.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "base/result.h"
#include "cli/cli.h"
#include "guard/guard.h"
#include "samples/sample_events.h"

namespace headroom {

// "headroom watch: TIME TYPE: message", written whole to `fd` (the loop's thread).
void PrintWatchEvent(int fd, const SampleEvent& event);
// "headroom: watch: ...": the first row that could not be written.
void PrintWatchWriteError(int fd, const Error& error);

// "run N in PATH (headroom explain --run N)".
void PrintWatchRecorded(const CliEnv& env, int64_t run_id, const std::filesystem::path& journal);
// "note: not recorded in the journal: why".
void PrintWatchNotRecorded(const CliEnv& env, const Error& error);

// Without a command: "stopped by signal N; R samples in FILE" (signal 0: "stopped; ...").
void PrintWatchStopped(const CliEnv& env, int signal, uint64_t rows, const std::string& out_path);
// With a command: killed by the guard, exited with status N, died of signal N, or ended,
// after S seconds; R samples in FILE.
void PrintWatchJobEnd(const CliEnv& env, const GuardSummary& summary, uint64_t rows,
                      const std::string& out_path);

}  // namespace headroom
