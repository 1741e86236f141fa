// Budget: how much of the pool a training run may use. On unified memory the only honest
// figure is the kernel's MemAvailable (free pages plus what it can reclaim), never
// nvidia-smi (N/A on GB10) or cudaMemGetInfo (counts page cache as used). The budget is
// MemAvailable minus a reserve for the OS and driver, or a size the user gives.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/result.h"
#include "sys/meminfo.h"
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
  std::string source;  // "MemAvailable (<path>) - reserve" or "--budget"
  // The pool GRPO's rollout fraction applies to: MemTotal, else the budget.
  uint64_t pool_bytes() const { return mem_total_bytes.value_or(budget_bytes); }
};

// Budget = MemAvailable - reserve (0 when the reserve is larger).
Budget BudgetFromMemInfo(const MemInfo& info, uint64_t reserve_bytes, const std::string& path);

// A budget the user set; the meminfo, when readable, still fills in the pool figures.
Budget BudgetFromSize(uint64_t budget_bytes, const std::optional<MemInfo>& info);

}  // namespace headroom
