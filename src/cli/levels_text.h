// The pool's levels (sys/pool_levels.h) on the terminal: where each came from, in words, and
// `config show`'s table of the levels on this machine and on a Spark (docs/config.md "The
// levels").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cli/cli.h"
#include "config/settings.h"
#include "sys/pool_levels.h"

namespace headroom {

// "default: the larger of 4 GiB and 8 % of MemTotal", "guard.kill_level (PATH:3)",
// "--reserve": translated.
std::string LevelSourceText(const PoolLevel& level);

// The levels with the settings `settings`, on this machine (MemTotal `mem_total_here`, "-"
// when unknown) and on a Spark, each with its source and the commands that use it.
void PrintLevelsTable(const CliEnv& env, const Settings& settings,
                      std::optional<uint64_t> mem_total_here);

}  // namespace headroom
