#include "config/config_json.h"

#include <optional>
#include <string>

#include "config/config_toml.h"

namespace headroom {

nlohmann::ordered_json SettingJson(const Settings& s, const SettingInfo& info) {
  using Json = nlohmann::ordered_json;
  const bool is_default = s.OriginOf(info.id) == SettingOrigin::kDefault;
  const std::string& where = s.WhereOf(info.id);
  Json j = {{"key", SettingKey(info)},
            {"value", nullptr},
            {"origin", std::string(SettingOriginName(s.OriginOf(info.id)))},
            {"where", where.empty() ? Json(nullptr) : Json(where)},
            {"env", std::string(info.env)},
            {"flag", std::string(info.flag)},
            {"default", info.default_text},
            {"used_by", info.used_by}};
  auto level = [&](const std::optional<MemLevel>& l) {
    j["bytes"] = l && !l->is_percent ? Json(l->bytes) : Json(nullptr);
    j["percent_of_mem_total"] = l && l->is_percent ? Json(l->percent) : Json(nullptr);
  };
  auto watts = [&](const std::optional<uint32_t>& mw) {
    j["watts"] = mw ? Json(static_cast<double>(*mw) / 1000.0) : Json(nullptr);
  };
  if (!is_default) j["value"] = s.TextOf(info.id);
  switch (info.id) {
    case SettingId::kJournal:
      j["value"] = s.journal.value.empty() ? Json(nullptr) : Json(s.journal.value);
      j["as_written"] = is_default ? Json(nullptr) : Json(s.journal.text);
      if (s.journal.value.empty()) j["error"] = EnglishText(s.journal_error);
      break;
    case SettingId::kReserve:
      if (is_default) j["value"] = info.default_text;
      j["bytes"] = s.reserve_bytes.value;
      break;
    case SettingId::kKillLevel:
      level(s.kill_level.value);
      break;
    case SettingId::kWarnLevel:
      level(s.warn_level.value);
      break;
    case SettingId::kWatchInterval:
    case SettingId::kTopInterval:
    case SettingId::kExportInterval: {
      const auto& ms = info.id == SettingId::kWatchInterval ? s.watch_interval.value
                       : info.id == SettingId::kTopInterval ? s.top_interval.value
                                                            : s.export_interval.value;
      if (is_default) j["value"] = info.default_text;
      j["milliseconds"] = ms.count();
      break;
    }
    case SettingId::kPlatformKind:
      if (is_default) j["value"] = "auto";
      break;
    case SettingId::kSustainedPower:
      watts(s.sustained_power_mw.value);
      break;
    case SettingId::kRatedPower:
      watts(s.rated_power_mw.value);
      break;
    case SettingId::kGuardianMinAvailable:
      level(s.guardian_min_available.value);
      break;
    case SettingId::kGuardianWarnAvailable:
      level(s.guardian_warn_available.value);
      break;
    case SettingId::kGuardianGrace:
      if (is_default) j["value"] = info.default_text;
      j["milliseconds"] = s.guardian_grace.value.count();
      break;
  }
  return j;
}

nlohmann::ordered_json ConfigShowJson(const LoadedConfig& c) {
  using Json = nlohmann::ordered_json;
  Json settings = Json::array();
  for (const SettingInfo& info : AllSettings()) settings.push_back(SettingJson(c.settings, info));
  return {{"schema_version", kConfigShowSchemaVersion},
          {"file",
           {{"path", c.location.path.empty() ? Json(nullptr) : Json(c.location.path)},
            {"named_by", c.location.named_by.empty() ? Json(nullptr) : Json(c.location.named_by)},
            {"explicit", c.location.explicit_path},
            {"exists", c.exists},
            {"reads_schema_version", kConfigSchemaVersion}}},
          {"precedence", {"flag", "environment", "file", "default"}},
          {"settings", settings},
          {"errors", EnglishTexts(c.errors)}};
}

}  // namespace headroom
