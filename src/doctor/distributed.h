// `headroom doctor` G11, the settings that decide how a multi-node run fails: whether a rank
// whose peer died is torn down or waits in a collective, which NCCL torch loads, whether Ray's
// memory monitor misreads GB10's pool, and whether Slurm ends every task when one fails
// (docs/doctor.md "G11"). The facts are gathered by doctor/gather.h; the check is pure.
//
// Sources, read from their code rather than their docs:
//   - pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp: the watchdog reads
//     TORCH_NCCL_ASYNC_ERROR_HANDLING with default 3 (SkipCleanUp: tear the process down
//     without aborting the communicator); 0 is NoHandling, so a collective that failed or timed
//     out leaves the rank waiting. TORCH_NCCL_ENABLE_MONITORING (default on) and
//     TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC (default 480 s) are the heartbeat monitor that kills a
//     process whose watchdog itself hangs. The NCCL_ names are the older spellings torch still
//     reads when the TORCH_NCCL_ one is unset.
//   - A pip torch loads the NCCL of its nvidia-nccl-cuNN wheel (SITE/nvidia/nccl/lib), not the
//     system's libnccl.so.2 that a DGX OS image (or a source build for the ConnectX ports)
//     installs.
//   - Ray's memory monitor (RAY_memory_monitor_refresh_ms, 0 turns it off) kills workers when
//     used memory crosses RAY_memory_usage_threshold; on GB10 it counts page cache and the GPU's
//     allocations in the one pool as pressure (issue 18).
//   - Slurm: KillOnBadExit in slurm.conf, or srun --kill-on-bad-exit / SLURM_KILL_BAD_EXIT=1
//     for one job step, ends every task of a step when one exits non-zero; Slurm's default is 0.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/message.h"

namespace headroom {

struct CheckResult;
struct DoctorFacts;

// The environment variables G11 reads and env-report.json records, in this order.
inline constexpr std::string_view kDistributedEnvNames[] = {
    "TORCH_NCCL_ASYNC_ERROR_HANDLING",
    "NCCL_ASYNC_ERROR_HANDLING",
    "TORCH_NCCL_BLOCKING_WAIT",
    "NCCL_BLOCKING_WAIT",
    "TORCH_NCCL_ENABLE_MONITORING",
    "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC",
    "NCCL_SOCKET_IFNAME",
    "RAY_memory_monitor_refresh_ms",
    "RAY_memory_usage_threshold",
    "SLURM_JOB_ID",
    "SLURM_JOB_NUM_NODES",
    "SLURM_NNODES",
    "SLURM_KILL_BAD_EXIT",
};

// What slurm.conf says about KillOnBadExit.
struct SlurmConfFacts {
  std::string path;                     // the file read ("" when none was found)
  std::optional<int> kill_on_bad_exit;  // nullopt: not in the file (Slurm's default, 0)
  std::string error;                    // found but unreadable: why
};

// KillOnBadExit from a slurm.conf text: "Key=Value" pairs, several to a line, keys
// case-insensitive, '#' to the end of a line a comment. nullopt when absent or not a number.
std::optional<int> ParseKillOnBadExit(std::string_view slurm_conf);

// The version in a library file name: "libnccl.so.2.21.5" -> "2.21.5", "libnccl.so.2" -> "2";
// "" when the name is not STEM.N[...].
std::string LibraryFileVersion(std::string_view filename, std::string_view stem);

struct DistributedFacts {
  std::map<std::string, std::string, std::less<>> env;  // kDistributedEnvNames that are set
  std::optional<std::string> nccl_wheel;                // the wheel's version
  std::string nccl_wheel_name;                          // "nvidia-nccl-cu12"
  std::optional<std::string> nccl_system;               // registered libnccl.so.2's version
  std::string nccl_system_path;
  std::optional<std::string> ray;  // ray's version in the Python environment
  SlurmConfFacts slurm;
};

// The NCCL torch loads: the wheel's when the environment has one, else the system's.
std::optional<std::string> EffectiveNccl(const DistributedFacts& d);

CheckResult CheckDistributed(const DoctorFacts& f);  // G11

}  // namespace headroom
