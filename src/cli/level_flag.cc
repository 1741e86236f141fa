#include "cli/level_flag.h"

#include <fmt/format.h>

#include "base/bytes.h"
#include "base/mem_level.h"
#include "cli/cli.h"
#include "cli/i18n.h"
#include "cli/message_text.h"

namespace headroom {
namespace {

[[noreturn]] void RefuseLevel(std::string_view source, const Error& error) {
  throw UsageError{fmt::format("{}: {}", source, TranslatedText(error.what))};
}

}  // namespace

uint64_t LevelFlag(const std::string& text, uint64_t mem_total_bytes, std::string_view flag) {
  const auto level = ParseMemLevel(text);
  if (!level) RefuseLevel(flag, level.error());
  const auto bytes = MemLevelBelowTotal(*level, mem_total_bytes, text);
  if (!bytes) RefuseLevel(flag, bytes.error());
  return *bytes;
}

uint64_t PoolAmountFlag(const std::string& text, uint64_t mem_total_bytes, std::string_view flag) {
  const auto level = ParseMemLevel(text);
  if (!level) RefuseLevel(flag, level.error());
  return MemLevelBytes(*level, mem_total_bytes);
}

std::string ConfiguredSource(const Settings& settings, SettingId id) {
  const std::string& where = settings.WhereOf(id);
  if (settings.OriginOf(id) == SettingOrigin::kFile) {
    return fmt::format("config: {}: {}", where, SettingKey(InfoOf(id)));
  }
  return fmt::format("config: {}", where);
}

std::optional<uint64_t> ConfiguredLevelBytes(const Settings& settings, SettingId id,
                                             uint64_t mem_total_bytes) {
  const auto& level = id == SettingId::kKillLevel ? settings.kill_level : settings.warn_level;
  if (!level.value) return std::nullopt;
  const auto bytes = MemLevelBelowTotal(*level.value, mem_total_bytes, level.text);
  if (!bytes) RefuseLevel(ConfiguredSource(settings, id), bytes.error());
  return *bytes;
}

void CheckWarnAboveKill(uint64_t warn_bytes, uint64_t kill_bytes, std::string_view warn_source,
                        std::string_view kill_name) {
  if (warn_bytes > kill_bytes) return;
  // TRANSLATORS: {0} is the flag or the configuration's file and key, {3} the flag or key
  // that sets the kill level.
  throw UsageError{TrFormat(
      "{0}: {1} is not above the kill level, {2} ({3}): the warning could never come first",
      warn_source, FormatBoth(warn_bytes), FormatBoth(kill_bytes), kill_name)};
}

}  // namespace headroom
