#include "plan/budget.h"

namespace headroom {
namespace {

void FillPool(const MemInfo& info, Budget* b) {
  b->mem_total_bytes = info.total_bytes();
  const auto available = info.EstimatedAvailable();
  if (available) {
    b->mem_available_bytes = available->bytes;
    b->available_source = available->source;
  }
  b->reclaimable_cache_bytes = info.reclaimable_page_cache_bytes();
  b->cached_bytes = info.cached_bytes();
}

}  // namespace

Budget BudgetFromMemInfo(const MemInfo& info, const LevelInputs& levels, const std::string& path) {
  Budget b;
  FillPool(info, &b);
  b.levels = ResolvePoolLevels(b.mem_total_bytes.value_or(0), levels);
  b.reserve_bytes = b.levels.reserve.bytes;
  const uint64_t available = b.mem_available_bytes.value_or(0);
  b.judged_available_bytes = available;
  const uint64_t floor = b.levels.floor_bytes();
  b.budget_bytes = available > floor ? available - floor : 0;
  b.source = (b.available_source.empty() ? std::string("MemAvailable") : b.available_source) +
             " from " + path + " minus the reserve and the kill level";
  return b;
}

Budget BudgetFromMemInfo(const MemInfo& info, uint64_t reserve_bytes, const std::string& path) {
  LevelInputs levels;
  levels.reserve = GivenLevel{reserve_bytes, std::nullopt, LevelOrigin::kFlag, "--reserve"};
  return BudgetFromMemInfo(info, levels, path);
}

Budget BudgetFromSize(uint64_t budget_bytes, const std::optional<MemInfo>& info) {
  Budget b;
  if (info) FillPool(*info, &b);
  b.budget_bytes = budget_bytes;
  b.judged_available_bytes = budget_bytes;
  b.levels = BudgetLevels(budget_bytes);
  b.source = "--budget";
  return b;
}

}  // namespace headroom
