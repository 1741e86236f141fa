// The watched job: RunGuard with a sampler thread and a tee thread beside it.
//
// Implementation notes.
//  - The sampler thread waits in poll() on a pipe's read end (SampleLoop::Run): one byte
//    written after RunGuard returns stops it between two rows, never inside one.
//  - Every descriptor made here is closed on every path (Fds below); the tee closes its
//    read ends itself (watch/job_tee.h).
//  - A straggler that escaped the job tree and keeps a pipe open gets 2 s before the tee
//    stops (watch/job_tee.h).
#include "watch/watched_job.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <thread>

#include "base/message.h"
#include "base/safe_file.h"
#include "guard/guarded_run.h"
#include "watch/job_tee.h"

namespace headroom {
namespace {

// The pipes: the job's stdout and stderr (with a log) and the sampler's stop pipe.
struct Fds {
  int out[2] = {-1, -1}, err[2] = {-1, -1}, stop[2] = {-1, -1};
  Fds() = default;
  Fds(const Fds&) = delete;
  Fds& operator=(const Fds&) = delete;
  ~Fds() {
    // The tee owns the read ends of out and err once it runs (they are -1 here then).
    for (int fd : {out[0], out[1], err[0], err[1], stop[0], stop[1]}) {
      if (fd >= 0) ::close(fd);
    }
  }
};

}  // namespace

Result<GuardSummary> RunWatchedJob(const SysRoot& root, GuardOptions options,
                                   WatchedJobSampling sampling, DurableLines* log,
                                   const WatchedJobIo& io, const GuardSay& say) {
  SampleLoop& loop = sampling.loop;
  const std::chrono::milliseconds interval = sampling.interval;
  // The events file watch made (a regular file: base/safe_file.h), appended to by the guard;
  // opened before any thread starts, so that its error can return at once.
  std::FILE* events_file = nullptr;
  if (!io.events_path.empty()) {
    auto opened = OpenAppendStream(io.events_path);
    if (!opened) return InContext("--events", opened.error());
    events_file = *opened;
  }
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> events_closer(
      events_file, [](std::FILE* f) { return std::fclose(f); });
  Fds fds;
  if (log && (::pipe2(fds.out, O_CLOEXEC) != 0 || ::pipe2(fds.err, O_CLOEXEC) != 0))
    return Error{Msg("pipe: {}", ErrnoArg{errno})};
  if (::pipe2(fds.stop, O_CLOEXEC) != 0) return Error{Msg("pipe: {}", ErrnoArg{errno})};
  options.stdout_fd = fds.out[1];
  options.stderr_fd = fds.err[1];
  std::atomic<bool> stop_tee{false};

  // Threads start with the signals blocked (see the header), then this thread's mask goes
  // back to what it was.
  sigset_t block, old;
  sigemptyset(&block);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE}) sigaddset(&block, s);
  ::pthread_sigmask(SIG_BLOCK, &block, &old);
  const int stop_read = fds.stop[0];
  std::thread sampler_thread([&loop, interval, stop_read] { loop.Run(interval, stop_read); });
  std::thread tee_thread;
  if (log) {
    const TeeFds tee{fds.out[0], fds.err[0], io.out_fd, io.err_fd};
    fds.out[0] = fds.err[0] = -1;  // the tee closes them
    tee_thread = std::thread([tee, log, &stop_tee] { TeeJobOutput(tee, *log, stop_tee); });
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);

  GuardEvents events(events_file);
  auto summary = RunGuard(root, options, events, say);
  if (summary) NoteLostEvents(events, io.events_path, *summary);

  // The job tree is empty: stop sampling after one last row, then drain the tee.
  WriteAll(fds.stop[1], "x");
  sampler_thread.join();
  loop.SampleOnce();
  for (int* fd : {&fds.out[1], &fds.err[1]}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  stop_tee = true;
  if (tee_thread.joinable()) tee_thread.join();
  return summary;
}

}  // namespace headroom
