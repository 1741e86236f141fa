// TeeJobOutput: `headroom watch --log`'s tee. It reads a job's stdout and stderr pipes to
// EOF, writes the bytes through to two descriptors unchanged (a progress bar's '\r'
// included) and the stamped segments (watch/log_tee.h) to the log file.
//
// The job holds the pipes' write ends; the caller closes its own copies once the job tree is
// empty, so the reads end at EOF. A straggler that escaped the tree and keeps a pipe open
// gets 2 s after `stop` is set before the tee gives up. A closed terminal (EPIPE, with
// SIGPIPE blocked in the tee's thread) drops the bytes there; the log still has them.
#pragma once

#include <atomic>
#include <string_view>

#include "base/durable_lines.h"

namespace headroom {

struct TeeFds {
  int out_read = -1;   // the job's stdout pipe (closed by the tee)
  int err_read = -1;   // the job's stderr pipe (closed by the tee)
  int out_write = -1;  // where its stdout bytes go (the terminal)
  int err_write = -1;  // where its stderr bytes go
};

// Writes all of `bytes` to `fd`, again after EINTR; on a closed descriptor (EPIPE) the rest
// is dropped.
void WriteAll(int fd, std::string_view bytes);

// Runs until both pipes are at EOF, or 2 s after `stop` when one is still open.
void TeeJobOutput(const TeeFds& fds, DurableLines& log, const std::atomic<bool>& stop);

}  // namespace headroom
