// The defaults commands take from the configuration when their flag is not given.
#include "cli/config_defaults.h"

#include <gtest/gtest.h>

#include "base/bytes.h"
#include "cli/level_flag.h"
#include "config/settings.h"
#include "guard/guard.h"
#include "testing_memory.h"

namespace headroom {
namespace {

using testing::kTotalPool;

CliEnv WithSettings(const std::vector<FlagSetting>& values) {
  CliEnv env;
  env.config.settings = ResolveSettings(
                            nullptr, [](const char*) -> const char* { return nullptr; }, values)
                            .settings;
  return env;
}

TEST(ConfigDefaults, KillLevelFlagThenSettingThenGuardDefault) {
  EXPECT_EQ(KillLevelBytes(CliEnv{}, "", "--min-available", kTotalPool),
            DefaultKillLevelBytes(kTotalPool));
  const CliEnv env = WithSettings({{SettingId::kKillLevel, "20%"}});
  EXPECT_EQ(KillLevelBytes(env, "", "--min-available", kTotalPool),
            static_cast<uint64_t>(0.2 * static_cast<double>(kTotalPool)));
  EXPECT_EQ(KillLevelBytes(env, "6GiB", "--min-available", kTotalPool), 6 * kGiB);
  try {
    KillLevelBytes(env, "6 apples", "--min-available", kTotalPool);
    ADD_FAILURE() << "a bad flag must throw";
  } catch (const UsageError& e) {
    EXPECT_EQ(e.message.rfind("--min-available: ", 0), 0u) << e.message;
  }
}

TEST(ConfigDefaults, WarnLevelFlagThenSettingThenTwiceTheKillLevel) {
  EXPECT_EQ(WarnLevelBytes(CliEnv{}, "", "--warn-available", kTotalPool, 5 * kGiB), 10 * kGiB);
  const CliEnv env = WithSettings({{SettingId::kWarnLevel, "16GiB"}});
  EXPECT_EQ(WarnLevelBytes(env, "", "--warn-available", kTotalPool, 5 * kGiB), 16 * kGiB);
  EXPECT_EQ(WarnLevelBytes(env, "10%", "--warn-available", kTotalPool, 5 * kGiB),
            SizeOrPercentFlag("10%", kTotalPool, "x"));
}

TEST(ConfigDefaults, AWarnLevelFlagAtOrBelowTheKillLevelIsRefusedByName) {
  for (const char* given : {"4GiB", "5GiB"}) {
    try {
      WarnLevelBytes(CliEnv{}, given, "--warn-available", kTotalPool, 5 * kGiB);
      ADD_FAILURE() << given << ": a warning that cannot come first must throw";
    } catch (const UsageError& e) {
      EXPECT_EQ(e.message.rfind("--warn-available: ", 0), 0u) << e.message;
      EXPECT_NE(e.message.find("--min-available"), std::string::npos) << e.message;
    }
  }
  EXPECT_EQ(WarnLevelBytes(CliEnv{}, "6GiB", "--warn-available", kTotalPool, 5 * kGiB), 6 * kGiB);
}

TEST(ConfigDefaults, JournalFlagThenSetting) {
  CliEnv env = WithSettings({{SettingId::kJournal, "/cfg/j.db"}});
  EXPECT_EQ(JournalPath(env, "").value(), "/cfg/j.db");
  EXPECT_EQ(JournalPath(env, "/flag/j.db").value(), "/flag/j.db");
  env.config.settings.journal.value.clear();
  env.config.settings.journal_error = Message::Literal("journal: no place for it");
  auto r = JournalPath(env, "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(EnglishText(r.error().what), "journal: no place for it");
}

TEST(ConfigDefaults, PlatformKindFlagThenSetting) {
  bool from_settings = true;
  EXPECT_FALSE(PlatformKindFor(CliEnv{}, "", &from_settings));
  EXPECT_FALSE(from_settings);
  const CliEnv env = WithSettings({{SettingId::kPlatformKind, "gb10"}});
  EXPECT_EQ(PlatformKindFor(env, "", &from_settings), PlatformKind::kGb10);
  EXPECT_TRUE(from_settings);
  EXPECT_EQ(PlatformKindFor(env, "none", &from_settings), PlatformKind::kNoGpu);
  EXPECT_FALSE(from_settings);
}

TEST(ConfigDefaults, ConfiguredTextOrTheDefault) {
  EXPECT_EQ(ConfiguredText(CliEnv{}, SettingId::kWatchInterval), "30s");
  EXPECT_EQ(ConfiguredText(CliEnv{}, SettingId::kExportInterval), "1s");
  EXPECT_EQ(ConfiguredText(WithSettings({{SettingId::kWatchInterval, "250ms"}}),
                           SettingId::kWatchInterval),
            "250ms");
}

TEST(ConfigDefaults, ConfiguredPowerReplacesTheProfilesFigures) {
  const CliEnv env = WithSettings({{SettingId::kSustainedPower, "150"}});
  PlatformProfile p;
  p.kind = PlatformKind::kDiscrete;
  p.sustained_power_mw = 300'000;
  p.rated_power_mw = 350'000;
  const PlatformProfile q = WithConfiguredPower(env, p);
  EXPECT_EQ(q.sustained_power_mw, 150'000u);
  EXPECT_EQ(q.rated_power_mw, 350'000u);
  EXPECT_EQ(q.kind, PlatformKind::kDiscrete);
}

// config.toml's levels and the commands' level flags must accept the same texts and mean
// the same bytes (both read base/mem_level.h; config/ holds no UsageError).
TEST(ConfigDefaults, LevelsAgreeWithLevelFlags) {
  for (const char* text : {"8%",   "0.5%", "99.9%", "1e1%", "16GiB", "16G",   "100GB", "1.5T",
                           "4096", "0%",   "100%",  "-1%",  "%",     "",      "8 %",   " 8%",
                           "abc",  "-4G",  "0",     "nan%", "inf%",  "0x10%", "12abc"}) {
    auto level = ParseMemLevel(text);
    std::optional<uint64_t> flag;
    try {
      flag = PoolAmountFlag(text, kTotalPool, "--x");
    } catch (const UsageError&) {
    }
    ASSERT_EQ(level.ok(), flag.has_value()) << "'" << text << "'";
    if (flag) {
      EXPECT_EQ(MemLevelBytes(*level, kTotalPool), *flag) << text;
    }
  }
}

}  // namespace
}  // namespace headroom
