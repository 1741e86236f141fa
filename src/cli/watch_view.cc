#include "cli/watch_view.h"

#include <fmt/format.h>

#include <cstdio>

#include "base/wall_time.h"
#include "cli/guard_view.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "guard/kill_line.h"
#include "watch/job_tee.h"

namespace headroom {
namespace {

// The line on stderr at the end of a job.
std::string JobEndLine(const GuardSummary& summary, uint64_t rows, const std::string& out_path) {
  const double seconds = summary.duration_s;
  if (summary.killed) {
    // TRANSLATORS: {1} is the reading against the level ("MemAvailable 21.38 GiB fell below the
    // kill level 21.40 GiB").
    return TrFormat("job killed by the guard after {0:.1f} s: {1}; {2} samples in {3}", seconds,
                    TranslatedText(KillReadingLine(summary)), rows, out_path);
  }
  if (summary.job_exit_code) {
    return TrFormat("job exited with status {} after {:.1f} s; {} samples in {}",
                    *summary.job_exit_code, seconds, rows, out_path);
  }
  if (summary.job_signal) {
    return TrFormat("job died of signal {} after {:.1f} s; {} samples in {}", *summary.job_signal,
                    seconds, rows, out_path);
  }
  return TrFormat("job ended after {:.1f} s; {} samples in {}", seconds, rows, out_path);
}

}  // namespace

void PrintWatchEvent(int fd, const SampleEvent& event) {
  WriteAll(fd, fmt::format("headroom watch: {} {}: {}\n", FormatUtcIso8601(event.time), event.type,
                           TranslatedText(event.message)));
}

void PrintWatchWriteError(int fd, const Error& error) {
  WriteAll(fd, "headroom: watch: " + TranslatedText(error.what) + "\n");
}

void PrintWatchRecorded(const CliEnv& env, int64_t run_id, const std::filesystem::path& journal) {
  std::fprintf(
      env.err, "headroom watch: %s\n",
      TrFormat("run {0} in {1} (headroom explain --run {0})", run_id, journal.string()).c_str());
}

void PrintWatchNotRecorded(const CliEnv& env, const Error& error) {
  std::fprintf(
      env.err, "headroom watch: %s\n",
      TrFormat("note: not recorded in the journal: {}", TranslatedText(error.what)).c_str());
}

void PrintWatchStopped(const CliEnv& env, int signal, uint64_t rows, const std::string& out_path) {
  std::fprintf(env.err, "headroom watch: %s\n",
               (signal ? TrFormat("stopped by signal {}; {} samples in {}", signal, rows, out_path)
                       : TrFormat("stopped; {} samples in {}", rows, out_path))
                   .c_str());
}

void PrintWatchJobEnd(const CliEnv& env, const GuardSummary& summary, uint64_t rows,
                      const std::string& out_path) {
  std::fprintf(env.err, "headroom watch: %s\n", JobEndLine(summary, rows, out_path).c_str());
  PrintKillFollowUp(env.err, "headroom watch: ", summary);
}

}  // namespace headroom
