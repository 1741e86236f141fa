// What one process holds of the unified pool, as `headroom guardian` counts it when it
// chooses a victim (docs/guardian.md "Choosing the victim"): its resident memory, its swap,
// the GPU memory NVML reports for it, the memfds it holds open (memory no RSS shows while
// they are unmapped, as CUDA's on GB10 is) and the shared memory it maps (smaps_rollup's
// Pss_Shmem). Parsed apart from reading (docs/style.md rule 2), read through a SysRoot.
//
// Every file may vanish mid-read (the process exited) or be unreadable (another user's fd
// directory): a missing reading is 0 bytes for the term, never an error, because a survey of
// the machine goes on past any one process.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sys/sysroot.h"

namespace headroom {

// One memfd a process holds open: the file's inode (two descriptors, or two processes of a
// job, holding one memfd count it once) and its size in bytes.
struct MemfdHeld {
  uint64_t inode = 0;
  uint64_t bytes = 0;
};

struct ProcessMemory {
  pid_t pid = 0;
  pid_t ppid = 0;
  pid_t session = 0;
  char state = '?';
  uint64_t start_ticks = 0;  // field 22 of stat: with the pid, the process's identity
  std::string comm;
  std::vector<std::string> argv;
  std::string cgroup;  // the cgroup v2 path, "" when unknown
  std::optional<uid_t> uid;
  bool kernel_thread = false;
  // The terms, in bytes (0 when unreadable).
  uint64_t rss_bytes = 0;        // VmRSS
  uint64_t rss_shmem_bytes = 0;  // RssShmem: the part of VmRSS that is shared memory
  uint64_t swap_bytes = 0;       // VmSwap
  uint64_t shmem_bytes = 0;      // smaps_rollup's Pss_Shmem
  uint64_t gpu_bytes = 0;        // NVML's usedGpuMemory, summed over devices
  std::vector<MemfdHeld> memfds;
};

// The memory lines of /proc/PID/status, in bytes, by key.
struct StatusMemory {
  std::optional<uint64_t> rss_bytes;        // VmRSS (absent for kernel threads and zombies)
  std::optional<uint64_t> rss_shmem_bytes;  // RssShmem (kernel 4.5+)
  std::optional<uint64_t> swap_bytes;       // VmSwap
};
StatusMemory ParseStatusMemory(std::string_view status_text);

// smaps_rollup's "Pss_Shmem:" line (kernel 5.8+), in bytes; nullopt when absent.
std::optional<uint64_t> ParseSmapsRollupShmemBytes(std::string_view text);

// Whether the target of a /proc/PID/fd link names a memfd: "/memfd:NAME (deleted)". The
// last path component is matched, so a fixture tree can point at a file of its own named so.
bool IsMemfdTarget(std::string_view link_target);

// The memfds `pid` holds open (at most 4096 descriptors are looked at), from readlink and
// stat of proc/PID/fd/N below the root; empty when the directory is unreadable.
std::vector<MemfdHeld> ReadMemfds(const SysRoot& root, pid_t pid);

// The cheap facts of one process (stat, cmdline, cgroup); nullopt when it is gone.
std::optional<ProcessMemory> ReadProcessMemoryBasics(const SysRoot& root, pid_t pid);

// Adds the terms (status, smaps_rollup, fds; `gpu_bytes_by_pid` from NVML) to `p`.
void ReadProcessTerms(const SysRoot& root, const std::map<pid_t, uint64_t>& gpu_bytes_by_pid,
                      ProcessMemory& p);

// The basics of every process below the root (those that vanish mid-scan are left out).
std::vector<ProcessMemory> ReadProcessTable(const SysRoot& root);

}  // namespace headroom
