#include "top/top_json.h"

#include <gtest/gtest.h>

#include "top_testing.h"

namespace headroom {
namespace {

TEST(TopJson, SchemaUnitsAndNulls) {
  const TopSnapshot s = testing::DiscreteSnapshot();
  const auto j = TopSnapshotJson(s, std::chrono::milliseconds(1000), "spark-1");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["host"], "spark-1");
  EXPECT_EQ(j["interval_ms"], 1000);
  EXPECT_EQ(j["platform"]["kind"], "discrete");
  EXPECT_EQ(j["platform"]["sustained_power_mw"], 700'000);
  EXPECT_EQ(j["gpu"]["present"], true);
  EXPECT_EQ(j["gpu"]["power_mw"], 690'000);
  EXPECT_EQ(j["gpu"]["clock_event_reasons"], 0x24);
  EXPECT_EQ(j["gpu"]["clock_event_reason_names"],
            nlohmann::ordered_json({"sw_power_cap", "sw_thermal_slowdown"}));
  EXPECT_TRUE(j["gpu"]["mem_clock_mhz"].is_null());  // not read: null, never 0
  EXPECT_EQ(j["memory"]["total_bytes"], testing::kSparkTotalBytes);
  EXPECT_EQ(j["memory"]["used_bytes"], testing::kSparkTotalBytes - 120'574'075ULL * 1024);
  EXPECT_EQ(j["memory"]["page_cache_bytes"], 3'284'512ULL * 1024);
  EXPECT_EQ(j["psi"]["memory_some_avg10_pct"], 0.0);
  ASSERT_EQ(j["guards"].size(), 1u);
  EXPECT_EQ(j["guards"][0]["kill_below_bytes"], 10ULL << 30);
  EXPECT_EQ(j["guards"][0]["guard_pid"], 4321);
  EXPECT_EQ(j["guards"][0]["kind"], "guard");
  ASSERT_EQ(j["processes"].size(), 3u);
  EXPECT_EQ(j["processes"][0]["cap"]["fraction"], 0.5);
  EXPECT_EQ(j["processes"][0]["gpu_bytes"], 40ULL << 30);
  EXPECT_TRUE(j["processes"][1]["pss_bytes"].is_null());
  EXPECT_EQ(j["processes"][2]["cap"]["fixed_after_load"], true);
  ASSERT_EQ(j["events"].size(), 2u);
  EXPECT_EQ(j["events"][0]["type"], "power_plateau");
  EXPECT_EQ(j["events"][0]["data"]["power_w"], 100);
  EXPECT_EQ(j["events"][0]["wall_time"], "2026-09-21T14:13:20.000Z");
}

TEST(TopJson, NoGpuKeepsTheShape) {
  const auto gpu = TopSnapshotJson(testing::Gb10Snapshot(), std::chrono::milliseconds(1000), "h");
  const auto none = TopSnapshotJson(testing::NoGpuSnapshot(), std::chrono::milliseconds(1000), "h");
  EXPECT_EQ(none["gpu"]["present"], false);
  EXPECT_EQ(none["platform"]["kind"], "none");
  EXPECT_TRUE(none["gpu"]["temperature_c"].is_null());
  EXPECT_TRUE(none["gpu"]["clock_event_reason_names"].is_null());
  EXPECT_NE(none["gpu"]["note"].get<std::string>().find("dlopen"), std::string::npos);
  // The same keys in the same order on every platform.
  std::vector<std::string> a, b;
  for (const auto& [k, v] : gpu["gpu"].items()) a.push_back(k);
  for (const auto& [k, v] : none["gpu"].items()) b.push_back(k);
  EXPECT_EQ(a, b);
  EXPECT_EQ(gpu["platform"]["memory_source"], "meminfo");  // GB10: the pool, not NVML
}

}  // namespace
}  // namespace headroom
