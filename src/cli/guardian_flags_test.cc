// guardian's levels and grace: flag > [guardian] > [guard] > the guard's default.
#include "cli/guardian_flags.h"

#include <gtest/gtest.h>

#include "base/bytes.h"
#include "config/settings.h"
#include "sys/pool_levels.h"
#include "testing_memory.h"

namespace headroom {
namespace {

using testing::kTotalPool;

CliEnv GuardianEnv(const std::vector<FlagSetting>& values) {
  CliEnv env;
  env.config.settings = ResolveSettings(
                            nullptr, [](const char*) -> const char* { return nullptr; }, values)
                            .settings;
  return env;
}

TEST(GuardianFlags, DefaultsAreTheGuards) {
  const GuardianOptions o = GuardianOptionsFromFlags(CliEnv{}, GuardianFlags{}, kTotalPool);
  EXPECT_EQ(o.min_available_bytes, DefaultKillLevelBytes(kTotalPool));
  EXPECT_EQ(o.warn_available_bytes, 2 * DefaultKillLevelBytes(kTotalPool));
  EXPECT_EQ(o.grace, std::chrono::seconds(3));
  EXPECT_FALSE(o.dry_run);
  EXPECT_TRUE(o.choice.only.empty());
}

TEST(GuardianFlags, GuardianSettingsBeforeTheGuardsAndFlagsBeforeBoth) {
  const CliEnv env = GuardianEnv({{SettingId::kKillLevel, "20%"},
                                  {SettingId::kGuardianMinAvailable, "6GiB"},
                                  {SettingId::kGuardianGrace, "500ms"}});
  GuardianOptions o = GuardianOptionsFromFlags(env, GuardianFlags{}, kTotalPool);
  EXPECT_EQ(o.min_available_bytes, 6 * kGiB);
  EXPECT_EQ(o.warn_available_bytes, 12 * kGiB);  // twice guardian's level, not guard's
  EXPECT_EQ(o.grace, std::chrono::milliseconds(500));
  EXPECT_EQ(env.config.settings.OriginOf(SettingId::kGuardianMinAvailable), SettingOrigin::kFlag);
  GuardianFlags f;
  f.min_available = "5GiB";
  f.grace = "2s";
  f.only = {"4242", "/user.slice", "ollama*"};
  o = GuardianOptionsFromFlags(env, f, kTotalPool);
  EXPECT_EQ(o.min_available_bytes, 5 * kGiB);
  EXPECT_EQ(o.grace, std::chrono::seconds(2));
  ASSERT_EQ(o.choice.only.size(), 3u);
  EXPECT_EQ(o.choice.only[0].kind, Scope::Kind::kTree);
  EXPECT_EQ(o.choice.only[1].kind, Scope::Kind::kCgroup);
  EXPECT_EQ(o.choice.only[2].kind, Scope::Kind::kName);
}

TEST(GuardianFlags, BadValuesAreUsageErrors) {
  GuardianFlags f;
  f.only = {"1"};
  EXPECT_THROW(GuardianOptionsFromFlags(CliEnv{}, f, kTotalPool), UsageError);
  f.only.clear();
  f.grace = "soon";
  EXPECT_THROW(GuardianOptionsFromFlags(CliEnv{}, f, kTotalPool), UsageError);
  const CliEnv env = GuardianEnv(
      {{SettingId::kGuardianMinAvailable, "8GiB"}, {SettingId::kGuardianWarnAvailable, "4GiB"}});
  EXPECT_THROW(GuardianOptionsFromFlags(env, GuardianFlags{}, kTotalPool), UsageError);
}

}  // namespace
}  // namespace headroom
