#include "export/exporter.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

namespace headroom {
namespace {

namespace fs = std::filesystem;

ExportSamplerConfig FixtureConfig() {
  ExportSamplerConfig c{SysRoot(fs::path(HEADROOM_SOURCE_DIR) / "tests/fixtures/gb10-idle")};
  c.nvml_lib = "/nonexistent/libnvidia-ml.so.1";
  c.interval = std::chrono::milliseconds(10);
  return c;
}

TEST(ExportSampler, PublishesBothFormatsAndCountsResponses) {
  ExportState state;
  ExportSampler sampler(FixtureConfig(), state);
  EXPECT_TRUE(sampler.nvml_error());
  EXPECT_EQ(state.Latest(), nullptr);
  sampler.SampleOnce();
  const auto first = state.Latest();
  ASSERT_NE(first, nullptr);
  EXPECT_NE(first->prometheus.find("headroom_exporter_samples_total 1"), std::string::npos)
      << first->prometheus;
  EXPECT_NE(first->openmetrics.find("# EOF"), std::string::npos);

  const auto metrics = ExportResponse(state, {"GET", "/metrics", ""});
  EXPECT_EQ(metrics.status, 200);
  EXPECT_EQ(metrics.content_type, kPrometheusContentType);
  EXPECT_EQ(metrics.body, first->prometheus);
  const auto om =
      ExportResponse(state, {"GET", "/metrics", "application/openmetrics-text; version=1.0.0"});
  EXPECT_EQ(om.content_type, kOpenMetricsContentType);
  EXPECT_EQ(om.body, first->openmetrics);
  const auto page = ExportResponse(state, {"GET", "/", ""});
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("fetch(\"/live.json\""), std::string::npos);
  const auto live = ExportResponse(state, {"GET", "/live.json", ""});
  EXPECT_EQ(live.status, 200);
  const auto j = nlohmann::json::parse(live.body);
  EXPECT_EQ(j["now"]["memory"]["total_bytes"], 130663165952ULL) << "the fixture's MemTotal";
  EXPECT_EQ(j["history"]["recent"].size(), 1u);
  EXPECT_EQ(ExportResponse(state, {"GET", "/nope", ""}).status, 404);

  state.CountResponse(200);
  state.CountResponse(404);
  sampler.SampleOnce();
  EXPECT_EQ(state.Requests().at(200), 1u);
  EXPECT_NE(state.Latest()->prometheus.find("code=\"404\""), std::string::npos);
}

TEST(ExportSampler, RunSamplesEveryIntervalUntilStopped) {
  ExportState state;
  ExportSampler sampler(FixtureConfig(), state);
  std::thread run([&] { sampler.Run(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  state.Stop();
  run.join();
  ASSERT_NE(state.Latest(), nullptr);
  EXPECT_EQ(state.Latest()->prometheus.find("headroom_exporter_samples_total 1\n"),
            std::string::npos);  // more than one by now
}

}  // namespace
}  // namespace headroom
