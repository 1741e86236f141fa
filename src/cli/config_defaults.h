// The defaults commands take from the configuration (config/settings.h, docs/config.md)
// when their own flag is not given: flag > environment > config.toml > built-in default.
// The flag's own parsing and messages stay the command's; these only fill the gap.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "cli/cli.h"
#include "gpu/platform.h"

namespace headroom {

// --journal when given, else the configured journal (HEADROOM_JOURNAL, config.toml's
// journal, $XDG_STATE_HOME/headroom/journal.db, ~/.local/state/headroom/journal.db).
// The error of ResolveJournalPath when nothing names a place.
Result<std::filesystem::path> JournalPath(const CliEnv& env, std::string_view flag_value);

// The guard's kill level: `flag_value` (SIZE or PCT of MemTotal, a UsageError naming
// `flag` when bad) when given, else [guard] kill_level, else DefaultKillLevelBytes.
uint64_t KillLevelBytes(const CliEnv& env, const std::string& flag_value, std::string_view flag,
                        uint64_t mem_total_bytes);

// The warning level: `flag_value` when given (a UsageError when it is not above
// `kill_level_bytes`), else [guard] warn_level, else twice `kill_level_bytes`.
uint64_t WarnLevelBytes(const CliEnv& env, const std::string& flag_value, std::string_view flag,
                        uint64_t mem_total_bytes, uint64_t kill_level_bytes);

// A setting as text, for a command that parses it like its own flag: as written in the
// environment or config.toml, else its default ("30s"). Used for intervals, whose flag
// parsing and limits the commands keep (the configuration holds them to the same limits).
std::string ConfiguredText(const CliEnv& env, SettingId id);

// The platform kind for explain and report: --platform when given (cli/run_files.h
// PlatformFlag), else [platform] kind (nullopt for "auto"). `from_settings` says which.
std::optional<PlatformKind> PlatformKindFor(const CliEnv& env, const std::string& flag_value,
                                            bool* from_settings);

// `profile` with the configured power figures ([platform] sustained_power_w and
// rated_power_w), for commands that judge samples by a profile (explain, report).
PlatformProfile WithConfiguredPower(const CliEnv& env, PlatformProfile profile);

}  // namespace headroom
