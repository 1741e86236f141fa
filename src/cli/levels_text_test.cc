// The guard's and sweep's levels (cli/config_defaults.h, what their flags resolve to when not
// given) are the model's (config/pool_levels_config.h), which plan and `config show` use.
#include "cli/levels_text.h"

#include <gtest/gtest.h>

#include "cli/config_defaults.h"
#include "config/pool_levels_config.h"
#include "gpu/platform.h"
#include "testing_memory.h"

namespace headroom {
namespace {

Settings LevelSettings(const std::vector<FlagSetting>& values) {
  return ResolveSettings(
             nullptr, [](const char*) -> const char* { return nullptr; }, values)
      .settings;
}

TEST(LevelsText, GuardsLevelsAreTheModelsOnEveryPoolAndSetting) {
  for (const std::vector<FlagSetting>& values :
       {std::vector<FlagSetting>{}, std::vector<FlagSetting>{{SettingId::kKillLevel, "12%"}},
        std::vector<FlagSetting>{{SettingId::kKillLevel, "6GiB"}, {SettingId::kWarnLevel, "9%"}}}) {
    CliEnv env;
    env.config.settings = LevelSettings(values);
    for (const uint64_t total : {testing::kTotalPool, kGb10MemTotalBytes}) {
      const PoolLevels model = ConfiguredPoolLevels(env.config.settings, total);
      const uint64_t kill = KillLevelBytes(env, "", "--min-available", total);
      EXPECT_EQ(kill, model.kill.bytes) << total;
      EXPECT_EQ(WarnLevelBytes(env, "", "--warn-available", total, kill), model.warn.bytes)
          << total;
    }
  }
}

TEST(LevelsText, SourcesSayTheRuleOrWhereTheLevelWasSet) {
  const PoolLevels rule = ResolvePoolLevels(kGb10MemTotalBytes);
  EXPECT_EQ(LevelSourceText(rule.kill), "default: the larger of 4 GiB and 8 % of MemTotal");
  const PoolLevels set =
      ConfiguredPoolLevels(LevelSettings({{SettingId::kKillLevel, "12%"}}), kGb10MemTotalBytes);
  EXPECT_EQ(set.kill.origin, LevelOrigin::kFlag);
  EXPECT_EQ(LevelSourceText(set.kill), "guard.kill_level (--kill-level)");
}

}  // namespace
}  // namespace headroom
