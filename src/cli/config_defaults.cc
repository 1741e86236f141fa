#include "cli/config_defaults.h"

#include "base/bytes.h"
#include "cli/level_flag.h"
#include "cli/run_files.h"
#include "config/settings.h"
#include "guard/guard.h"

namespace headroom {

Result<std::filesystem::path> JournalPath(const CliEnv& env, std::string_view flag_value) {
  if (!flag_value.empty()) return std::filesystem::path(flag_value);
  const Settings& s = env.config.settings;
  if (s.journal.value.empty()) return Error{s.journal_error};
  return std::filesystem::path(s.journal.value);
}

uint64_t KillLevelBytes(const CliEnv& env, const std::string& flag_value, std::string_view flag,
                        uint64_t mem_total_bytes) {
  if (!flag_value.empty()) return LevelFlag(flag_value, mem_total_bytes, flag);
  const auto level =
      ConfiguredLevelBytes(env.config.settings, SettingId::kKillLevel, mem_total_bytes);
  return level ? *level : DefaultKillLevelBytes(mem_total_bytes);
}

uint64_t WarnLevelBytes(const CliEnv& env, const std::string& flag_value, std::string_view flag,
                        uint64_t mem_total_bytes, uint64_t kill_level_bytes) {
  if (!flag_value.empty()) {
    const uint64_t warn = LevelFlag(flag_value, mem_total_bytes, flag);
    CheckWarnAboveKill(warn, kill_level_bytes, flag, "--min-available");
    return warn;
  }
  const Settings& s = env.config.settings;
  const auto level = ConfiguredLevelBytes(s, SettingId::kWarnLevel, mem_total_bytes);
  if (!level) return DefaultWarnLevelBytes(kill_level_bytes);
  CheckWarnAboveKill(*level, kill_level_bytes, ConfiguredSource(s, SettingId::kWarnLevel),
                     flag == "--guard" ? "guard.kill_level" : "--min-available");
  return *level;
}

std::string ConfiguredText(const CliEnv& env, SettingId id) {
  const std::string& text = env.config.settings.TextOf(id);
  return text.empty() ? std::string(InfoOf(id).default_text) : text;
}

std::optional<PlatformKind> PlatformKindFor(const CliEnv& env, const std::string& flag_value,
                                            bool* from_settings) {
  *from_settings = false;
  if (!flag_value.empty()) return PlatformFlag(flag_value);
  const auto& kind = env.config.settings.platform_kind.value;
  *from_settings = kind.has_value();
  return kind;
}

PlatformProfile WithConfiguredPower(const CliEnv& env, PlatformProfile profile) {
  const Settings& s = env.config.settings;
  return ApplyPlatformOverride(std::move(profile),
                               {std::nullopt, s.sustained_power_mw.value, s.rated_power_mw.value});
}

}  // namespace headroom
