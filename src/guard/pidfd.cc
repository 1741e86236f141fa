#include "guard/pidfd.h"

#include <sys/syscall.h>
#include <unistd.h>

#include "sys/processes.h"

namespace headroom {
namespace {
// From the kernel's unified syscall table (include/uapi/asm-generic/unistd.h): the same
// numbers on x86_64 and aarch64.
constexpr long kSysPidfdOpen = 434;
constexpr long kSysPidfdSendSignal = 424;
constexpr long kSysProcessMrelease = 448;
}  // namespace

int PidfdOpen(pid_t pid) { return static_cast<int>(::syscall(kSysPidfdOpen, pid, 0)); }

int PidfdSendSignal(int pidfd, int sig) {
  return static_cast<int>(::syscall(kSysPidfdSendSignal, pidfd, sig, nullptr, 0));
}

int ProcessMrelease(int pidfd) {
  return static_cast<int>(::syscall(kSysProcessMrelease, pidfd, 0));
}

std::optional<int> OpenVerifiedPidfd(const SysRoot& root, pid_t pid, uint64_t starttime_ticks) {
  const int fd = PidfdOpen(pid);
  if (fd < 0) return std::nullopt;
  const auto now = ReadProcStat(root, pid);
  if (!now || now->starttime_ticks != starttime_ticks) {
    ::close(fd);
    return std::nullopt;
  }
  return fd;
}

}  // namespace headroom
