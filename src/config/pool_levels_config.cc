// The levels from the settings (config/pool_levels_config.h).
#include "config/pool_levels_config.h"

#include "gpu/platform.h"  // kGb10MemTotalBytes

namespace headroom {
namespace {

// "guard.kill_level (PATH:3)": the key, and where it was set.
std::string WhereOfLevel(const Settings& s, SettingId id) {
  const std::string key = SettingKey(InfoOf(id));
  const std::string& where = s.WhereOf(id);
  return where.empty() ? key : key + " (" + where + ")";
}

LevelOrigin OriginOfLevel(SettingOrigin origin) {
  return origin == SettingOrigin::kFlag ? LevelOrigin::kFlag : LevelOrigin::kConfig;
}

std::optional<GivenLevel> GivenOf(const Settings& s, SettingId id,
                                  const std::optional<MemLevel>& level) {
  if (!level) return std::nullopt;
  GivenLevel g;
  if (level->is_percent) {
    g.percent = level->percent;
  } else {
    g.bytes = level->bytes;
  }
  g.origin = OriginOfLevel(s.OriginOf(id));
  g.where = WhereOfLevel(s, id);
  return g;
}

nlohmann::ordered_json OneLevelJson(const PoolLevel& l) {
  return {{"bytes", l.bytes}, {"source", LevelOriginName(l.origin)}, {"where", l.where}};
}

nlohmann::ordered_json MachineLevelsJson(const PoolLevels& l) {
  return {{"mem_total_bytes", l.mem_total_bytes},
          {"reserve", OneLevelJson(l.reserve)},
          {"warn", OneLevelJson(l.warn)},
          {"kill", OneLevelJson(l.kill)},
          {"sweep_limit", OneLevelJson(l.sweep_limit)}};
}

}  // namespace

LevelInputs LevelInputsOf(const Settings& s) {
  LevelInputs in;
  if (s.reserve_bytes.origin != SettingOrigin::kDefault) {
    GivenLevel g;
    g.bytes = s.reserve_bytes.value;
    g.origin = OriginOfLevel(s.reserve_bytes.origin);
    g.where = WhereOfLevel(s, SettingId::kReserve);
    in.reserve = g;
  }
  in.kill = GivenOf(s, SettingId::kKillLevel, s.kill_level.value);
  in.warn = GivenOf(s, SettingId::kWarnLevel, s.warn_level.value);
  return in;
}

PoolLevels ConfiguredPoolLevels(const Settings& settings, uint64_t mem_total_bytes) {
  return ResolvePoolLevels(mem_total_bytes, LevelInputsOf(settings));
}

nlohmann::ordered_json LevelsJson(const Settings& settings,
                                  std::optional<uint64_t> mem_total_here) {
  nlohmann::ordered_json j;
  j["this_machine"] = mem_total_here
                          ? MachineLevelsJson(ConfiguredPoolLevels(settings, *mem_total_here))
                          : nlohmann::ordered_json(nullptr);
  j["gb10"] = MachineLevelsJson(ConfiguredPoolLevels(settings, kGb10MemTotalBytes));
  return j;
}

}  // namespace headroom
