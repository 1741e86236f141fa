// The settings table, the value rules and the resolver's precedence, for every setting.
#include "config/settings.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "base/bytes.h"
#include "testing_env.h"

namespace headroom {
namespace {

using namespace std::chrono_literals;

TEST(ConfigSettings, TableNamesEverySettingOnce) {
  std::set<int> ids;
  std::set<std::string> keys, envs, flags;
  for (const SettingInfo& info : AllSettings()) {
    EXPECT_TRUE(ids.insert(static_cast<int>(info.id)).second);
    EXPECT_TRUE(keys.insert(SettingKey(info)).second) << SettingKey(info);
    EXPECT_TRUE(envs.insert(std::string(info.env)).second) << info.env;
    EXPECT_TRUE(flags.insert(std::string(info.flag)).second) << info.flag;
    EXPECT_EQ(info.env.rfind("HEADROOM_", 0), 0u) << info.env;
    EXPECT_EQ(info.flag.rfind("--", 0), 0u) << info.flag;
    EXPECT_EQ(&InfoOf(info.id), &info);
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(SettingId::kGuardianGrace) + 1);
  EXPECT_EQ(envs.count("HEADROOM_JOURNAL"), 1u);  // the variable that existed before the file
}

TEST(ConfigSettings, Defaults) {
  const Settings s;
  EXPECT_EQ(s.reserve_bytes.value, kDefaultReserveBytes);
  EXPECT_EQ(s.reserve_bytes.value, 4 * kGiB);
  EXPECT_FALSE(s.kill_level.value);
  EXPECT_FALSE(s.warn_level.value);
  EXPECT_EQ(s.watch_interval.value, 30s);
  EXPECT_EQ(s.top_interval.value, 1s);
  EXPECT_EQ(s.export_interval.value, 1s);
  EXPECT_FALSE(s.platform_kind.value);
  EXPECT_FALSE(s.sustained_power_mw.value);
  EXPECT_FALSE(s.rated_power_mw.value);
  for (const SettingInfo& info : AllSettings()) {
    EXPECT_EQ(s.OriginOf(info.id), SettingOrigin::kDefault);
    EXPECT_EQ(s.WhereOf(info.id), "");
  }
}

TEST(ConfigSettings, LiteralDefaultTextsMeanTheDefaults) {
  // "4GiB", "30s", "1s", "auto" in the table (and so in `config show` and the docs) are the
  // values the constructor sets.
  const Settings defaults;
  for (SettingId id : {SettingId::kReserve, SettingId::kWatchInterval, SettingId::kTopInterval,
                       SettingId::kExportInterval, SettingId::kPlatformKind}) {
    Settings s;
    ASSERT_TRUE(SetSettingFromText(s, id, InfoOf(id).default_text, SettingOrigin::kFile, "x").ok());
    EXPECT_EQ(s.reserve_bytes.value, defaults.reserve_bytes.value);
    EXPECT_EQ(s.watch_interval.value, defaults.watch_interval.value);
    EXPECT_EQ(s.top_interval.value, defaults.top_interval.value);
    EXPECT_EQ(s.export_interval.value, defaults.export_interval.value);
    EXPECT_EQ(s.platform_kind.value, defaults.platform_kind.value);
  }
}

TEST(ConfigSettings, MemLevels) {
  auto pct = ParseMemLevel("8%");
  ASSERT_TRUE(pct.ok());
  EXPECT_TRUE(pct->is_percent);
  EXPECT_EQ(MemLevelBytes(*pct, 100 * kGiB), 8 * kGiB);
  auto size = ParseMemLevel("16GiB");
  ASSERT_TRUE(size.ok());
  EXPECT_FALSE(size->is_percent);
  EXPECT_EQ(MemLevelBytes(*size, 100 * kGiB), 16 * kGiB);
  EXPECT_EQ(MemLevelBytes(*ParseMemLevel("10GB"), 1), 10 * kGB);
  for (const char* bad : {"", "%", "0%", "100%", "-5%", "abc%", "8 %", "nan%", "-1G", "0", "1x"}) {
    EXPECT_FALSE(ParseMemLevel(bad).ok()) << bad;
  }
}

// One row per setting: three valid texts, one per layer.
struct Layers {
  SettingId id;
  const char* file;
  const char* env;
  const char* flag;
};
constexpr Layers kLayers[] = {
    {SettingId::kJournal, "/f/journal.db", "/e/journal.db", "/c/journal.db"},
    {SettingId::kReserve, "1GiB", "2GiB", "3GiB"},
    {SettingId::kKillLevel, "5%", "6GiB", "7%"},
    {SettingId::kWarnLevel, "10GiB", "11%", "12GiB"},
    {SettingId::kWatchInterval, "10s", "20s", "40s"},
    {SettingId::kTopInterval, "2s", "3s", "4s"},
    {SettingId::kExportInterval, "200ms", "300ms", "400ms"},
    {SettingId::kPlatformKind, "gb10", "discrete", "integrated"},
    {SettingId::kSustainedPower, "90", "95", "99"},
    {SettingId::kRatedPower, "200", "210", "220"},
    {SettingId::kGuardianMinAvailable, "5%", "6GiB", "7%"},
    {SettingId::kGuardianWarnAvailable, "10GiB", "11%", "12GiB"},
    {SettingId::kGuardianGrace, "0s", "1s", "500ms"},
};

TEST(ConfigSettings, PrecedenceForEverySetting) {
  ASSERT_EQ(std::size(kLayers), AllSettings().size());
  for (const Layers& l : kLayers) {
    const SettingInfo& info = InfoOf(l.id);
    SCOPED_TRACE(SettingKey(info));
    ConfigFile file{"/etc/c.toml", 1, {{l.id, l.file, 7}}};
    const auto env = testing::FakeEnv({{std::string(info.env), l.env}});
    const std::vector<FlagSetting> flags = {{l.id, l.flag}};

    ResolvedSettings r = ResolveSettings(nullptr, testing::FakeEnv({}), {});
    EXPECT_TRUE(r.errors.empty());
    EXPECT_EQ(r.settings.OriginOf(l.id), SettingOrigin::kDefault);

    r = ResolveSettings(&file, testing::FakeEnv({}), {});
    EXPECT_TRUE(r.errors.empty()) << EnglishText(r.errors.front());
    EXPECT_EQ(r.settings.OriginOf(l.id), SettingOrigin::kFile);
    EXPECT_EQ(r.settings.WhereOf(l.id), "/etc/c.toml:7");
    EXPECT_EQ(r.settings.TextOf(l.id), l.file);

    r = ResolveSettings(&file, env, {});
    EXPECT_EQ(r.settings.OriginOf(l.id), SettingOrigin::kEnvironment);
    EXPECT_EQ(r.settings.WhereOf(l.id), info.env);
    EXPECT_EQ(r.settings.TextOf(l.id), l.env);

    r = ResolveSettings(&file, env, flags);
    EXPECT_EQ(r.settings.OriginOf(l.id), SettingOrigin::kFlag);
    EXPECT_EQ(r.settings.WhereOf(l.id), info.flag);
    EXPECT_EQ(r.settings.TextOf(l.id), l.flag);
    EXPECT_TRUE(r.errors.empty());

    // Environment without a file, flag without either.
    r = ResolveSettings(nullptr, env, {});
    EXPECT_EQ(r.settings.OriginOf(l.id), SettingOrigin::kEnvironment);
    r = ResolveSettings(nullptr, testing::FakeEnv({}), flags);
    EXPECT_EQ(r.settings.OriginOf(l.id), SettingOrigin::kFlag);
  }
}

TEST(ConfigSettings, TypedValuesFollowTheWinningLayer) {
  ConfigFile file{"c.toml",
                  1,
                  {{SettingId::kReserve, "1GiB", 2},
                   {SettingId::kKillLevel, "5%", 3},
                   {SettingId::kWatchInterval, "10s", 4},
                   {SettingId::kPlatformKind, "gb10", 5},
                   {SettingId::kSustainedPower, "97.5", 6}}};
  auto r = ResolveSettings(
      &file, testing::FakeEnv({{"HEADROOM_RESERVE", "2GB"}, {"HEADROOM_PLATFORM", "none"}}),
      {{SettingId::kWatchInterval, "1.5s"}});
  ASSERT_TRUE(r.errors.empty());
  const Settings& s = r.settings;
  EXPECT_EQ(s.reserve_bytes.value, 2 * kGB);
  ASSERT_TRUE(s.kill_level.value);
  EXPECT_TRUE(s.kill_level.value->is_percent);
  EXPECT_DOUBLE_EQ(s.kill_level.value->percent, 5);
  EXPECT_EQ(s.watch_interval.value, 1500ms);
  EXPECT_EQ(s.platform_kind.value, PlatformKind::kNoGpu);
  EXPECT_EQ(s.sustained_power_mw.value, 97'500u);
  const PlatformOverride o = s.platform_override();
  EXPECT_EQ(o.kind, PlatformKind::kNoGpu);
  EXPECT_EQ(o.sustained_power_mw, 97'500u);
  EXPECT_FALSE(o.rated_power_mw);
}

TEST(ConfigSettings, AutoMeansDetect) {
  auto r = ResolveSettings(nullptr, testing::FakeEnv({{"HEADROOM_PLATFORM", "auto"}}), {});
  EXPECT_FALSE(r.settings.platform_kind.value);
  EXPECT_EQ(r.settings.platform_kind.origin, SettingOrigin::kEnvironment);
}

TEST(ConfigSettings, BadLayerIsAnErrorAndKeepsTheLayerBelow) {
  ConfigFile file{"/c.toml", 1, {{SettingId::kReserve, "8GiB", 3}}};
  auto r = ResolveSettings(&file, testing::FakeEnv({{"HEADROOM_RESERVE", "lots"}}),
                           {{SettingId::kWatchInterval, "10ms"}});
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_EQ(EnglishText(r.errors[0]),
            "config: HEADROOM_RESERVE: 'lots' is not a size (examples: 16G, 16GiB, 100GB, 1.5T)");
  EXPECT_EQ(EnglishText(r.errors[1]),
            "config: --watch-interval: '10ms' is below the minimum of 100ms");
  EXPECT_EQ(r.settings.reserve_bytes.value, 8 * kGiB);
  EXPECT_EQ(r.settings.reserve_bytes.origin, SettingOrigin::kFile);
  EXPECT_EQ(r.settings.watch_interval.value, 30s);
}

TEST(ConfigSettings, EmptyVariablesCountAsUnset) {
  auto r = ResolveSettings(
      nullptr, testing::FakeEnv({{"HEADROOM_RESERVE", ""}, {"HEADROOM_KILL_LEVEL", ""}}), {});
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.settings.reserve_bytes.origin, SettingOrigin::kDefault);
}

TEST(ConfigSettings, IntervalLimits) {
  auto set = [](SettingId id, const char* text) {
    Settings s;
    return SetSettingFromText(s, id, text, SettingOrigin::kFlag, "--x").ok();
  };
  EXPECT_TRUE(set(SettingId::kWatchInterval, "100ms"));
  EXPECT_FALSE(set(SettingId::kWatchInterval, "99ms"));
  EXPECT_TRUE(set(SettingId::kWatchInterval, "1h"));
  EXPECT_TRUE(set(SettingId::kWatchInterval, "168h"));  // ParseDuration's week
  EXPECT_FALSE(set(SettingId::kWatchInterval, "169h"));
  EXPECT_TRUE(set(SettingId::kExportInterval, "1h"));
  EXPECT_FALSE(set(SettingId::kExportInterval, "3600001ms"));
  EXPECT_FALSE(set(SettingId::kTopInterval, "61m"));
  EXPECT_FALSE(set(SettingId::kTopInterval, "99999us"));  // compared before rounding
}

TEST(ConfigSettings, Watts) {
  Settings s;
  EXPECT_TRUE(
      SetSettingFromText(s, SettingId::kRatedPower, "10000", SettingOrigin::kFlag, "").ok());
  EXPECT_EQ(s.rated_power_mw.value, 10'000'000u);
  for (const char* bad : {"10000.5", "0", "-1", "1e400", "100W", " 100", "", "0.0001"}) {
    EXPECT_FALSE(SetSettingFromText(s, SettingId::kRatedPower, bad, SettingOrigin::kFlag, "").ok())
        << bad;
  }
}

TEST(ConfigSettings, SustainedAboveRatedIsAnError) {
  ConfigFile file{"/c.toml", 1, {{SettingId::kSustainedPower, "300", 4}}};
  auto r = ResolveSettings(&file, testing::FakeEnv({{"HEADROOM_RATED_POWER_W", "240"}}), {});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(EnglishText(r.errors[0]),
            "config: sustained power 300 W (/c.toml:4) is above the rated 240 W "
            "(HEADROOM_RATED_POWER_W)");
  // Equal is fine (a discrete GPU's limit is both).
  r = ResolveSettings(&file, testing::FakeEnv({{"HEADROOM_RATED_POWER_W", "300"}}), {});
  EXPECT_TRUE(r.errors.empty());
}

TEST(ConfigSettings, JournalDefaultFollowsTheStateDirectory) {
  auto r = ResolveSettings(nullptr, testing::FakeEnv({{"HOME", "/home/u"}}), {});
  EXPECT_EQ(r.settings.journal.value, "/home/u/.local/state/headroom/journal.db");
  EXPECT_EQ(r.settings.journal.origin, SettingOrigin::kDefault);
  r = ResolveSettings(nullptr, testing::FakeEnv({{"HOME", "/home/u"}, {"XDG_STATE_HOME", "/s"}}),
                      {});
  EXPECT_EQ(r.settings.journal.value, "/s/headroom/journal.db");
  r = ResolveSettings(nullptr,
                      testing::FakeEnv({{"HOME", "/home/u"}, {"XDG_STATE_HOME", "relative"}}), {});
  EXPECT_EQ(r.settings.journal.value, "/home/u/.local/state/headroom/journal.db");
  r = ResolveSettings(nullptr, testing::FakeEnv({}), {});
  EXPECT_EQ(r.settings.journal.value, "");
  EXPECT_NE(EnglishText(r.settings.journal_error).find("HEADROOM_JOURNAL"), std::string::npos);
  EXPECT_TRUE(r.errors.empty());  // only a command that needs the journal fails
}

TEST(ConfigSettings, JournalInTheFileExpandsHome) {
  ConfigFile file{"/c.toml", 1, {{SettingId::kJournal, "~/j/journal.db", 2}}};
  auto r =
      ResolveSettings(&file, testing::FakeEnv({{"HOME", "/home/u"}, {"XDG_STATE_HOME", "/s"}}), {});
  ASSERT_TRUE(r.errors.empty());
  EXPECT_EQ(r.settings.journal.value, "/home/u/j/journal.db");
  EXPECT_EQ(r.settings.journal.text, "~/j/journal.db");
  EXPECT_EQ(r.settings.journal.origin, SettingOrigin::kFile);
  // HEADROOM_JOURNAL still wins, as it always has, and is taken as given.
  r = ResolveSettings(
      &file, testing::FakeEnv({{"HOME", "/home/u"}, {"HEADROOM_JOURNAL", "rel/j.db"}}), {});
  EXPECT_EQ(r.settings.journal.value, "rel/j.db");
  // No HOME to expand with.
  r = ResolveSettings(&file, testing::FakeEnv({}), {});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(EnglishText(r.errors[0]), "config: /c.toml:2: journal: '~' needs HOME, which is unset");
}

TEST(ConfigSettings, NearestNames) {
  EXPECT_EQ(NearestSettingName("plan", "resrve"), "reserve");
  EXPECT_EQ(NearestSettingName("guard", "kill-level"), "kill_level");
  EXPECT_EQ(NearestSettingName("platform", "sustained_power"), "sustained_power_w");  // 2 edits
  EXPECT_EQ(NearestSettingName("platform", "sustained"), "");                         // 8 edits
  EXPECT_EQ(NearestSettingName("", "wath"), "[watch]");
  EXPECT_EQ(NearestSettingName("", "kill_level"), "[guard] kill_level");
  EXPECT_EQ(NearestSettingName("watch", "reserve"), "[plan] reserve");
  EXPECT_EQ(NearestSettingName("", "colour"), "");
  EXPECT_EQ(NearestSettingName("", std::string(10000, 'x')), "");
}

TEST(ConfigSettings, FileOnlyEnvPassesHomeAndStateHomeAndNoSetting) {
  const auto getenv = [](const char* name) -> const char* {
    const std::string_view n(name);
    if (n == "HOME") return "/home/u";
    if (n == "XDG_STATE_HOME") return "/home/u/.state";
    if (n == "HEADROOM_RESERVE") return "8GiB";
    return "set";
  };
  const GetEnvFn file_only = FileOnlyEnv(getenv);
  EXPECT_STREQ(file_only("HOME"), "/home/u");
  EXPECT_STREQ(file_only("XDG_STATE_HOME"), "/home/u/.state");
  EXPECT_EQ(file_only("HEADROOM_RESERVE"), nullptr);
  EXPECT_EQ(file_only("HEADROOM_JOURNAL"), nullptr);
  EXPECT_EQ(file_only("PATH"), nullptr);
  // Checked with it, a file's reserve is the file's, whatever HEADROOM_RESERVE says.
  const ResolvedSettings resolved = ResolveSettings(nullptr, file_only, {});
  EXPECT_TRUE(resolved.errors.empty());
  EXPECT_EQ(resolved.settings.reserve_bytes.origin, SettingOrigin::kDefault);
  EXPECT_EQ(resolved.settings.reserve_bytes.value, Settings().reserve_bytes.value);
}

}  // namespace
}  // namespace headroom
