// Budget: how much of the pool a training run may use. On unified memory the only honest
// figure is the kernel's MemAvailable (free pages plus what it can reclaim), never
// nvidia-smi (N/A on GB10) or cudaMemGetInfo (counts page cache as used). The run is judged
// against MemAvailable and the pool's levels (sys/pool_levels.h, docs/config.md "The
// levels"): the reserve for the OS is set aside first; of what the run leaves after it, it
// fits when the guard's warning level is left, is tight between the warning and the kill
// level, and does not fit below the kill level. The budget is what the run may peak at
// before "does not fit": MemAvailable minus the reserve and the kill level; or a size the
// user gives (then the pool is that size, and fits leaves 10 % of it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/result.h"
#include "sys/meminfo.h"
#include "sys/pool_levels.h"
#include "sys/sysroot.h"

namespace headroom {

struct Budget {
  std::optional<uint64_t> mem_total_bytes;
  std::optional<uint64_t> mem_available_bytes;
  std::string available_source;  // "MemAvailable", or how it was estimated
  std::optional<uint64_t> reclaimable_cache_bytes;
  std::optional<uint64_t> cached_bytes;
  uint64_t reserve_bytes = 0;
  uint64_t budget_bytes = 0;
  // What the judge (JudgePool) weighs a peak against: MemAvailable, or --budget's size; and
  // the levels it keeps free.
  uint64_t judged_available_bytes = 0;
  PoolLevels levels;
  std::string source;  // "MemAvailable (<path>) - reserve" or "--budget"
  // The pool GRPO's rollout fraction applies to: MemTotal, else the budget.
  uint64_t pool_bytes() const { return mem_total_bytes.value_or(budget_bytes); }
};

// Budget = MemAvailable - reserve - kill level (0 when they are larger); `levels` from the
// machine's MemTotal (ResolvePoolLevels). The reserve given is the levels' reserve.
Budget BudgetFromMemInfo(const MemInfo& info, const LevelInputs& levels, const std::string& path);
// The same with only a reserve given (the other levels by their rules).
Budget BudgetFromMemInfo(const MemInfo& info, uint64_t reserve_bytes, const std::string& path);

// A budget the user set; the meminfo, when readable, still fills in the pool figures.
Budget BudgetFromSize(uint64_t budget_bytes, const std::optional<MemInfo>& info);

}  // namespace headroom
