// What `headroom guardian` reads on a real machine, as the callbacks of its loop
// (guardian_loop.h GuardianIo): MemAvailable from a kept-open meminfo, NVML's compute
// processes, the running guards from the journal's registry (top/running_guards.h), the
// page cache dropped for --release-driver-pools. The CLI builds them from its flags.
#pragma once

#include <sys/types.h>

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

// The running guards of the journal at `path` (top/running_guards.h), on this host.
std::vector<LiveGuard> ReadLiveGuards(const std::filesystem::path& journal, const SysRoot& root);

}  // namespace headroom
