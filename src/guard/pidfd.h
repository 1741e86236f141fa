// pidfds: a file descriptor that names one process for its whole life, so a signal can
// never reach an unrelated process that reused a PID (Linux 5.3+). The syscall numbers are
// the same on every architecture (the unified syscall table), so no libc wrapper is needed.
#pragma once

#include <sys/types.h>

#include <optional>

#include "sys/sysroot.h"

namespace headroom {

// pidfd_open(pid, 0); -1 with errno on failure.
int PidfdOpen(pid_t pid);
// pidfd_send_signal(fd, sig, nullptr, 0); 0 on success, -1 with errno.
int PidfdSendSignal(int pidfd, int sig);
// process_mrelease(fd, 0) (Linux 5.15+): reap a SIGKILLed process's memory at once.
int ProcessMrelease(int pidfd);

// Opens a pidfd for `pid` and checks that it is still the process whose start time was
// `starttime_ticks` (read from /proc/PID/stat before the open): between reading a PID
// and opening it, the process may have died and the PID been reused.
std::optional<int> OpenVerifiedPidfd(const SysRoot& root, pid_t pid, uint64_t starttime_ticks);

}  // namespace headroom
