#include "export/live.h"

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

namespace headroom {
namespace {

LivePoint PointAt(double t, double available) {
  LivePoint p;
  p.t = t;
  p.available_bytes = available;
  p.power_w = 10 + static_cast<int>(t) % 7;
  return p;
}

// Two days at one point every 100 ms: the server holds at most 900 recent points and 1440
// minutes, and sends at most 300 of each, ending at the newest.
TEST(ExportLiveHistory, BoundedOnTheServerAndDecimatedForTheClient) {
  LiveHistory h;
  const double start = 1'700'000'000;
  for (int i = 0; i < 2 * 24 * 3600 * 10; ++i) h.Add(PointAt(start + i * 0.1, 1e9 + i));
  EXPECT_LE(h.recent_size(), 900u);
  EXPECT_GE(h.recent_size(), 899u);
  EXPECT_LE(h.day_size(), 1440u);
  EXPECT_GE(h.day_size(), 1439u);
  const auto j = h.ToJson();
  ASSERT_TRUE(j["recent"].is_array());
  EXPECT_LE(j["recent"].size(), LiveHistory::kMaxPointsOut);
  EXPECT_LE(j["day"].size(), LiveHistory::kMaxPointsOut);
  EXPECT_GE(j["day"].size(), 280u);
  const double newest = start + (2 * 24 * 3600 * 10 - 1) * 0.1;
  EXPECT_DOUBLE_EQ(j["recent"].back()[0].get<double>(), newest);
  EXPECT_DOUBLE_EQ(j["day"].back()[0].get<double>(), newest);
  EXPECT_GE(newest - j["day"].front()[0].get<double>(), 23 * 3600.0);
  EXPECT_LE(newest - j["recent"].front()[0].get<double>(), LiveHistory::kRecentSeconds);
  EXPECT_GE(newest - j["recent"].front()[0].get<double>(), LiveHistory::kRecentSeconds - 10);
  // What a poll carries for the charts stays small whatever the uptime: a page that redraws
  // it every second stays responsive.
  EXPECT_LT(j.dump().size(), 64u * 1024) << j.dump().size();
}

// A minute's point keeps its lowest MemAvailable (the dip a guard acts on) and highest power.
TEST(ExportLiveHistory, AMinuteKeepsItsDipAndPeak) {
  LiveHistory h;
  h.Add(PointAt(600, 5e9));
  LivePoint dip = PointAt(610, 1e9);
  dip.power_w = 90;
  h.Add(dip);
  h.Add(PointAt(620, 4e9));
  const auto j = h.ToJson();
  ASSERT_EQ(j["day"].size(), 1u);
  EXPECT_EQ(j["day"][0][1], 1e9);
  EXPECT_EQ(j["day"][0][4], 90);
  EXPECT_EQ(j["day"][0][0], 620);
  EXPECT_EQ(j["recent"].size(), 3u);
  EXPECT_TRUE(j["day"][0][7].is_null()) << "no steps known: null, never 0";
}

TEST(ExportLive, BodyCarriesNowJobsHistoryAndNoNodes) {
  LiveHistory h;
  h.Add(PointAt(1, 2));
  GuardedJob job{7, "guard", 1, 2, 42, 1.5};
  const auto body = nlohmann::json::parse(
      LiveJsonBody(nlohmann::ordered_json{{"host", "spark-1"}}, {job}, h, nullptr));
  EXPECT_EQ(body["schema_version"], 1);
  EXPECT_EQ(body["now"]["host"], "spark-1");
  EXPECT_EQ(body["now"]["guarded_jobs"][0]["steps"], 42);
  EXPECT_EQ(body["now"]["guarded_jobs"][0]["run_id"], 7);
  EXPECT_EQ(body["history"]["recent"].size(), 1u);
  EXPECT_TRUE(body["nodes"].is_array());
  EXPECT_TRUE(body["nodes"].empty());
}

TEST(ExportLive, NodeUrlsPointAtTheLiveData) {
  auto u = ParseLiveNodeUrl("http://127.0.0.1:9464/metrics");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->path, "/live.json");
  EXPECT_EQ(u->port, 9464);
  EXPECT_FALSE(ParseLiveNodeUrl("https://spark-1:9464"));
}

// A node that does not answer is a column that says so, not a page that stops.
TEST(ExportLive, ANodeThatDoesNotAnswerSaysSo) {
  auto u = ParseLiveNodeUrl("http://127.0.0.1:9");
  ASSERT_TRUE(u);
  LiveNodes nodes({*u}, std::chrono::milliseconds(50));
  EXPECT_EQ(nodes.ToJson()[0]["error"], "not fetched yet");
  std::thread run([&] { nodes.Run(); });
  for (int i = 0; i < 100 && nodes.ToJson()[0]["error"] == "not fetched yet"; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  nodes.Stop();
  run.join();
  const auto j = nodes.ToJson();
  EXPECT_EQ(j[0]["ok"], false);
  EXPECT_EQ(j[0]["url"], "http://127.0.0.1:9");
  EXPECT_NE(j[0]["error"], "not fetched yet");
}

}  // namespace
}  // namespace headroom
