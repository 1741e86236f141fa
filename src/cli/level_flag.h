// The commands' pool levels (docs/guard.md "Levels"): a flag's text or a configured level
// (config.toml, HEADROOM_*), read by base/mem_level.h ParseMemLevel and held below MemTotal,
// every refusal one UsageError line naming the flag, or the file and key.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "config/settings.h"

namespace headroom {

// A level flag (guard's --min-available and --warn-available, sweep's --min-available): SIZE
// with its unit or PCT of MemTotal, below MemTotal. A bare number, a bad text or a level at
// or above MemTotal is a UsageError "FLAG: ...".
uint64_t LevelFlag(const std::string& text, uint64_t mem_total_bytes, std::string_view flag);

// An amount of the pool (sweep --limit, ps --need, --require-available): read as a level (a
// unit or PCT, no bare number), but it may reach MemTotal: the command judges that itself
// (a --require-available above MemTotal is a refusal to start, status 3).
uint64_t PoolAmountFlag(const std::string& text, uint64_t mem_total_bytes, std::string_view flag);

// A configured level (kKillLevel, kWarnLevel) in bytes, held below MemTotal; nullopt when it
// is not set. A UsageError "config: PATH:LINE: guard.kill_level: ..." (or the variable's
// name) when it is at or above MemTotal.
std::optional<uint64_t> ConfiguredLevelBytes(const Settings& settings, SettingId id,
                                             uint64_t mem_total_bytes);

// A warning level must be above the kill level, or the warning never comes first: a
// UsageError naming `warn_source` ("--warn-available", or the configured warn_level's file
// and key) and what sets the kill level (`kill_name`: "--min-available") otherwise.
void CheckWarnAboveKill(uint64_t warn_bytes, uint64_t kill_bytes, std::string_view warn_source,
                        std::string_view kill_name);

// Where a configured setting came from, as the configuration's own errors name it:
// "config: PATH:LINE: guard.kill_level", "config: HEADROOM_KILL_LEVEL".
std::string ConfiguredSource(const Settings& settings, SettingId id);

}  // namespace headroom
