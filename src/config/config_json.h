// `headroom config show --json`: every setting with its value, origin and where it came
// from, the file looked at and the errors (schema_version 1, docs/config.md). An English
// renderer: errors through EnglishText, nothing translated.
#pragma once

#include <nlohmann/json.hpp>

#include "config/config_file.h"
#include "config/settings.h"

namespace headroom {

inline constexpr int kConfigShowSchemaVersion = 1;

// One setting's entry in "settings": key, value (null at its default, except where the
// default is a value: reserve, intervals, platform kind), origin, where, env, flag, default,
// used_by, and the setting's typed value (bytes, percent_of_mem_total, milliseconds, watts).
nlohmann::ordered_json SettingJson(const Settings& settings, const SettingInfo& info);

// The whole document.
nlohmann::ordered_json ConfigShowJson(const LoadedConfig& config);

}  // namespace headroom
