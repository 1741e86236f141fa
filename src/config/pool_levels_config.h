// The pool's levels (sys/pool_levels.h) as config.toml and its variables set them:
// plan.reserve, guard.kill_level, guard.warn_level. Unset keys stay unset, so the level's
// default rule applies (docs/config.md "The levels").
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "config/settings.h"
#include "sys/pool_levels.h"

namespace headroom {

LevelInputs LevelInputsOf(const Settings& settings);

// The levels on a machine with `mem_total_bytes`, from the settings alone (no flag).
PoolLevels ConfiguredPoolLevels(const Settings& settings, uint64_t mem_total_bytes);

// `config show --json`'s "levels": {"this_machine": ..., "gb10": ...}, each
// {mem_total_bytes, reserve, warn, kill, sweep_limit: {bytes, source, where}}; this_machine is
// null when its MemTotal is unknown.
nlohmann::ordered_json LevelsJson(const Settings& settings, std::optional<uint64_t> mem_total_here);

}  // namespace headroom
