// `headroom ps`'s survey of who holds the pool: NVML's compute processes (optional), the
// holders below a root (sys/pool_holders.h) with their caps (sys/holder_caps.h), and with a
// job's need the advice beside it (pool/pool_advice.h); and its JSON document
// (schema_version 1, docs/ps.md), an English renderer. Nothing is signalled.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/message.h"
#include "gpu/gpu.h"
#include "pool/pool_advice.h"
#include "sys/holder_caps.h"
#include "sys/pool_holders.h"
#include "sys/sysroot.h"

namespace headroom {

// The compute processes of every device, or why there are none.
struct GpuProcessList {
  std::optional<std::vector<GpuProcess>> processes;  // nullopt: NVML not available
  Message note;  // why not, or the last device whose list was unreadable; empty if neither
};

// The lists of `gpu`'s devices, concatenated.
GpuProcessList ReadGpuProcesses(GpuBackend& gpu);
// NVML's, loaded from `library` ("" = the default name); the load error as the note.
GpuProcessList ReadGpuProcesses(const std::string& library);

struct PoolSurvey {
  std::optional<uint64_t> mem_total_bytes;
  GpuProcessList gpu;
  std::vector<PoolHolder> holders;
  std::vector<HolderCap> caps;       // parallel to holders
  std::optional<PoolAdvice> advice;  // with a need only
};

// The holders below `root` (not `self`) with their caps; with `need_bytes` (and MemTotal
// known) the advice, keeping `reserve_bytes` free.
PoolSurvey SurveyPool(const SysRoot& root, GpuProcessList gpu, pid_t self,
                      std::optional<uint64_t> mem_total_bytes,
                      std::optional<uint64_t> need_bytes = std::nullopt,
                      std::optional<uint64_t> reserve_bytes = std::nullopt);

// One holder's entry in ps --json's "processes".
nlohmann::ordered_json HolderJson(const PoolHolder& holder, const HolderCap& cap,
                                  const HolderAdvice* advice);
// ps --json's document.
nlohmann::ordered_json PoolSurveyToJson(const PoolSurvey& survey);

}  // namespace headroom
