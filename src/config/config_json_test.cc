// config show --json's document from settings resolved on literal variables: each origin,
// the typed values and the file's entry (docs/config.md). The command is in
// tests/cli/config_cli_test.cc.
#include "config/config_json.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "base/bytes.h"
#include "testing_env.h"

namespace headroom {
namespace {

const nlohmann::ordered_json& Entry(const nlohmann::ordered_json& doc, const std::string& key) {
  for (const auto& s : doc["settings"]) {
    if (s["key"] == key) return s;
  }
  static const nlohmann::ordered_json kNone;
  return kNone;
}

TEST(ConfigJson, OriginsAndTypedValues) {
  LoadedConfig c;
  const ResolvedSettings r = ResolveSettings(
      nullptr, testing::FakeEnv({{"HEADROOM_KILL_LEVEL", "12GiB"}, {"HEADROOM_WARN_LEVEL", "10%"}}),
      {{SettingId::kWatchInterval, "2s"}});
  ASSERT_TRUE(r.errors.empty());
  c.settings = r.settings;
  const auto j = ConfigShowJson(c);
  EXPECT_EQ(j["schema_version"], kConfigShowSchemaVersion);
  EXPECT_EQ(j["precedence"],
            nlohmann::ordered_json::array({"flag", "environment", "file", "default"}));
  EXPECT_TRUE(j["file"]["path"].is_null());
  EXPECT_EQ(j["file"]["exists"], false);
  EXPECT_EQ(j["errors"], nlohmann::ordered_json::array());
  ASSERT_EQ(j["settings"].size(), AllSettings().size());

  const auto& kill = Entry(j, "guard.kill_level");
  EXPECT_EQ(kill["origin"], "environment");
  EXPECT_EQ(kill["where"], "HEADROOM_KILL_LEVEL");
  EXPECT_EQ(kill["value"], "12GiB");
  EXPECT_EQ(kill["bytes"], 12 * kGiB);
  EXPECT_TRUE(kill["percent_of_mem_total"].is_null());
  EXPECT_EQ(Entry(j, "guard.warn_level")["percent_of_mem_total"], 10.0);
  const auto& watch = Entry(j, "watch.interval");
  EXPECT_EQ(watch["origin"], "flag");
  EXPECT_EQ(watch["milliseconds"], 2000);
  const auto& reserve = Entry(j, "plan.reserve");
  EXPECT_EQ(reserve["origin"], "default");
  EXPECT_EQ(reserve["value"], "4GiB");  // a default that is a value
  EXPECT_EQ(reserve["bytes"], 4 * kGiB);
  EXPECT_TRUE(reserve["where"].is_null());
  EXPECT_EQ(Entry(j, "platform.kind")["value"], "auto");
  EXPECT_TRUE(Entry(j, "platform.sustained_power_w")["watts"].is_null());
}

}  // namespace
}  // namespace headroom
