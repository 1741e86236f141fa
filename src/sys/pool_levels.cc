// The pool's shared levels (sys/pool_levels.h).
#include "sys/pool_levels.h"

#include <algorithm>

#include "base/message.h"  // N_: the rules are shown translated

namespace headroom {
namespace {

constexpr double kSparkReserveBytes = 28e9;
constexpr double kSparkMemTotalBytes = 127600748.0 * 1024;
constexpr uint64_t kBudgetFitShareOf100 = 10;  // --budget SIZE: fits leaves 10 % of it

PoolLevel Resolved(const std::optional<GivenLevel>& given, uint64_t mem_total_bytes,
                   uint64_t rule_bytes, const char* rule) {
  if (!given) return {rule_bytes, LevelOrigin::kRule, rule};
  uint64_t bytes = given->bytes.value_or(0);
  if (!given->bytes && given->percent) {
    bytes = static_cast<uint64_t>(*given->percent / 100.0 * static_cast<double>(mem_total_bytes));
  }
  return {bytes, given->origin, given->where};
}

}  // namespace

uint64_t DefaultKillLevelBytes(uint64_t mem_total_bytes) {
  return std::max<uint64_t>(4ULL << 30, mem_total_bytes * 8 / 100);
}

uint64_t DefaultWarnLevelBytes(uint64_t kill_level_bytes) { return 2 * kill_level_bytes; }

uint64_t DefaultSweepLimitBytes(uint64_t mem_total_bytes, std::optional<uint64_t> fit_bytes) {
  const double owners = kSparkReserveBytes *
                        std::min(1.0, static_cast<double>(mem_total_bytes) / kSparkMemTotalBytes);
  const uint64_t fit = fit_bytes.value_or(
      kDefaultReserveBytes + DefaultWarnLevelBytes(DefaultKillLevelBytes(mem_total_bytes)));
  const uint64_t keep = std::max(static_cast<uint64_t>(owners), fit);
  return mem_total_bytes > keep ? mem_total_bytes - keep : 0;
}

std::string_view LevelOriginName(LevelOrigin origin) {
  switch (origin) {
    case LevelOrigin::kRule:
      return "default";
    case LevelOrigin::kConfig:
      return "config";
    case LevelOrigin::kFlag:
      return "flag";
  }
  return "?";
}

uint64_t PoolLevels::floor_bytes() const { return reserve.bytes + kill.bytes; }

uint64_t PoolLevels::fit_bytes() const { return reserve.bytes + std::max(warn.bytes, kill.bytes); }

PoolLevels ResolvePoolLevels(uint64_t mem_total_bytes, const LevelInputs& given) {
  PoolLevels l;
  l.mem_total_bytes = mem_total_bytes;
  l.reserve = Resolved(given.reserve, mem_total_bytes, kDefaultReserveBytes, N_("4 GiB"));
  l.kill = Resolved(given.kill, mem_total_bytes, DefaultKillLevelBytes(mem_total_bytes),
                    N_("the larger of 4 GiB and 8 % of MemTotal"));
  l.warn = Resolved(given.warn, mem_total_bytes, DefaultWarnLevelBytes(l.kill.bytes),
                    N_("twice the kill level"));
  l.sweep_limit = Resolved(
      given.sweep_limit, mem_total_bytes, DefaultSweepLimitBytes(mem_total_bytes, l.fit_bytes()),
      N_("MemTotal minus 28 GB (scaled for smaller machines) or minus the reserve and the "
         "warning level, whichever is more"));
  return l;
}

PoolLevels BudgetLevels(uint64_t budget_bytes) {
  PoolLevels l;
  l.mem_total_bytes = budget_bytes;
  l.reserve = {0, LevelOrigin::kFlag, "--budget"};
  l.kill = {0, LevelOrigin::kFlag, "--budget"};
  l.warn = {
      budget_bytes / 100 * kBudgetFitShareOf100 + (budget_bytes % 100) * kBudgetFitShareOf100 / 100,
      LevelOrigin::kFlag, "--budget"};
  l.sweep_limit = {budget_bytes, LevelOrigin::kFlag, "--budget"};
  return l;
}

int64_t LeftoverBytes(uint64_t available_bytes, uint64_t peak_bytes) {
  return available_bytes >= peak_bytes ? static_cast<int64_t>(available_bytes - peak_bytes)
                                       : -static_cast<int64_t>(peak_bytes - available_bytes);
}

PoolVerdict JudgePool(uint64_t available_bytes, uint64_t peak_bytes, const PoolLevels& levels) {
  if (peak_bytes > available_bytes) return PoolVerdict::kDoesNotFit;
  const uint64_t left = available_bytes - peak_bytes;
  if (left < levels.floor_bytes()) return PoolVerdict::kDoesNotFit;
  if (left < levels.fit_bytes()) return PoolVerdict::kTight;
  return PoolVerdict::kFits;
}

}  // namespace headroom
