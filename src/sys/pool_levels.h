// The pool's levels, defined once below the commands (docs/config.md "The levels"): the
// reserve plan keeps for the OS, the guard's warning and kill levels, and the sweep's
// default limit; each with its figure and where it came from (the default rule from
// MemTotal, a config.toml key or its variable, or a flag). One judge (JudgePool) says
// whether a peak fits a pool with these levels: plan, its advice and the ladder use it, and a
// discrete GPU's device pool is judged by it too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace headroom {

// plan's --reserve when no flag, variable or file sets it: kept back from MemAvailable for
// the OS and driver.
inline constexpr uint64_t kDefaultReserveBytes = 4ULL << 30;  // 4 GiB

// The kill level when none is given: the larger of 4 GiB and 8 % of MemTotal. Used by
// `guard`, `sweep` (every trial), `watch --guard`, `ps --need` (as the reserve) and plan.
uint64_t DefaultKillLevelBytes(uint64_t mem_total_bytes);

// The warning level when none is given: twice the kill level.
uint64_t DefaultWarnLevelBytes(uint64_t kill_level_bytes);

// The sweep's --limit when none is given: MemTotal minus the larger of the owners' reserve on a
// DGX Spark (28 GB of its 127,600,748 kB, so the peak stops near 100 GB of the 128 GB pool;
// the same share on smaller machines) and what a plan that fits leaves (`fit_bytes`: the
// reserve and the warning level, PoolLevels::fit_bytes), so that a trial at the limit leaves
// the guard's warning level free. Without `fit_bytes`, the default levels' on this MemTotal.
uint64_t DefaultSweepLimitBytes(uint64_t mem_total_bytes,
                                std::optional<uint64_t> fit_bytes = std::nullopt);

// Where a level's figure came from.
enum class LevelOrigin { kRule, kConfig, kFlag };
std::string_view LevelOriginName(LevelOrigin origin);  // "default", "config", "flag"

// A level someone gave: bytes, or a percentage of MemTotal (config.toml's and the flags'
// SIZE-or-PCT), and where ("guard.kill_level (PATH:3)", "--min-available").
struct GivenLevel {
  std::optional<uint64_t> bytes;
  std::optional<double> percent;  // in (0, 100), when bytes is not set
  LevelOrigin origin = LevelOrigin::kConfig;
  std::string where;
};

struct PoolLevel {
  uint64_t bytes = 0;
  LevelOrigin origin = LevelOrigin::kRule;
  std::string where;  // the rule (English, marked N_: shown translated), the key, or the flag
};

struct PoolLevels {
  uint64_t mem_total_bytes = 0;
  PoolLevel reserve;      // plan: kept free for the OS and driver
  PoolLevel kill;         // guard: the job is killed below it
  PoolLevel warn;         // guard: the companion is asked for a checkpoint below it
  PoolLevel sweep_limit;  // sweep: a trial's peak may reach it (a pool use, not a free level)
  // plan: what a run must leave of MemAvailable so as not to be killed: the reserve (the OS's
  // share, set aside first) plus the kill level.
  uint64_t floor_bytes() const;
  // plan: what a run must leave of MemAvailable to "fit": the reserve plus the warning level
  // (at least the kill level).
  uint64_t fit_bytes() const;
};

struct LevelInputs {
  std::optional<GivenLevel> reserve, kill, warn, sweep_limit;
};

// Each level: the one given, else its default rule.
PoolLevels ResolvePoolLevels(uint64_t mem_total_bytes, const LevelInputs& given = {});

// A budget given as a size (plan --budget SIZE): a pool of that size whose fit line keeps 10 %
// of it free and whose floor is 0 (the guard's levels are on MemAvailable, not on it).
PoolLevels BudgetLevels(uint64_t budget_bytes);

enum class PoolVerdict { kFits, kTight, kDoesNotFit };

// A pool with `available_bytes` free (MemAvailable, or a device's free memory) and a run that
// peaks at `peak_bytes`: of what is left, the reserve is set aside for the OS; the rest fits
// when it is at least the warning level, is tight between the warning and the kill level,
// and does not fit below the kill level (fit_bytes(), floor_bytes()). A device pool with no
// OS on it passes a reserve of 0.
PoolVerdict JudgePool(uint64_t available_bytes, uint64_t peak_bytes, const PoolLevels& levels);

// What is left of `available_bytes` after `peak_bytes`; negative when the peak is larger.
int64_t LeftoverBytes(uint64_t available_bytes, uint64_t peak_bytes);

}  // namespace headroom
