// What `headroom guardian` reads on a real machine, as the callbacks of its loop
// (guardian_loop.h GuardianIo): MemAvailable from a kept-open meminfo, NVML's compute
// processes, the running guards from the journal's registry (top/running_guards.h), the
// page cache dropped for --release-driver-pools, the clock, and the wait for a signal between
// steps. The CLI builds them from its flags.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/message.h"
#include "gpu/gpu.h"
#include "guardian/guardian_loop.h"
#include "sys/sysroot.h"

namespace headroom {

// The monotonic clock in seconds (GuardianIo::now_s).
double GuardianMonotonicNow();

// Waits up to `period` for one of the signals of `set` (blocked by the caller): the signal,
// or 0 when the period ended first.
int WaitForGuardianSignal(const sigset_t& set, std::chrono::milliseconds period);

// MemAvailable through one descriptor kept open and pread at each reading (no open, no
// allocation per reading: the guard's way, docs/guard.md).
class MemAvailableReader {
 public:
  explicit MemAvailableReader(const SysRoot& root);
  ~MemAvailableReader();
  MemAvailableReader(const MemAvailableReader&) = delete;
  MemAvailableReader& operator=(const MemAvailableReader&) = delete;
  bool ok() const { return fd_ >= 0; }
  std::optional<uint64_t> Read();

 private:
  int fd_ = -1;
};

// NVML's compute processes, pid -> bytes summed over devices; empty without NVML. `note`
// says why there are none (the library's load error).
class GpuProcessReader {
 public:
  // `library`: "" for the default name; nullopt: no NVML at all.
  explicit GpuProcessReader(const std::optional<std::string>& library);
  ~GpuProcessReader();
  std::map<pid_t, uint64_t> Read();
  const Message& note() const { return note_; }
  bool loaded() const { return backend_ != nullptr; }

 private:
  std::unique_ptr<GpuBackend> backend_;
  Message note_;
};

// --psi-kill: a PSI trigger on full memory pressure, 500 ms of full stall per 1 s window (2 s
// without CAP_SYS_RESOURCE), as the guard's (docs/guard.md). Fired() polls it without
// waiting: the loop looks at each step, so far from the level the kill may come up to a
// period (at most 1 s) after the pressure.
class PsiFullTrigger {
 public:
  explicit PsiFullTrigger(const SysRoot& root);
  ~PsiFullTrigger();
  PsiFullTrigger(const PsiFullTrigger&) = delete;
  PsiFullTrigger& operator=(const PsiFullTrigger&) = delete;
  bool ok() const { return fd_ >= 0; }
  bool Fired();

 private:
  int fd_ = -1;
};

// --release-driver-pools: ladder's flush (ladder/flush.h: sync, then 3 to vm/drop_caches);
// true when it was written.
bool ReleaseDriverPools(const SysRoot& root);

// The running guards of the journal at `path` (top/running_guards.h), on this host.
std::vector<LiveGuard> ReadLiveGuards(const std::filesystem::path& journal, const SysRoot& root);

}  // namespace headroom
