#include "doctor/bandwidth.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "base/bytes.h"

namespace headroom {
namespace {

// The slow threshold: 10 % below GB10's measured low end, exactly 162 GB/s in doubles.
static_assert(kGb10MeasuredLowGbps * kGb10SlowFraction == 162.0);

TEST(Bandwidth, SummarizeOddCount) {
  CopyMeasurement m;
  m.bytes = 1'000'000'000;
  m.seconds = {0.02, 0.01, 0.04};
  Summarize(m);
  // 2 x 1e9 bytes (read + write) in 0.02 s = 100 GB/s.
  EXPECT_DOUBLE_EQ(m.median_gbps, 100.0);
  EXPECT_DOUBLE_EQ(m.best_gbps, 200.0);
  EXPECT_DOUBLE_EQ(m.worst_gbps, 50.0);
  // The repeats stay in the order they were timed.
  EXPECT_EQ(m.seconds, (std::vector<double>{0.02, 0.01, 0.04}));
}

TEST(Bandwidth, SummarizeEvenCountMediansTheMiddleTimes) {
  CopyMeasurement m;
  m.bytes = 1'000'000'000;
  m.seconds = {0.04, 0.01, 0.02, 0.05};
  Summarize(m);
  // Middle two times 0.02 and 0.04 -> 0.03 s -> 2e9 / 0.03 / 1e9 GB/s.
  EXPECT_NEAR(m.median_gbps, 2.0 / 0.03, 1e-9);
  EXPECT_DOUBLE_EQ(m.best_gbps, 200.0);
  EXPECT_DOUBLE_EQ(m.worst_gbps, 40.0);
}

TEST(Bandwidth, SummarizeSingleAndEmpty) {
  CopyMeasurement one;
  one.bytes = 500'000'000;
  one.seconds = {0.01};
  Summarize(one);
  EXPECT_DOUBLE_EQ(one.median_gbps, 100.0);
  EXPECT_DOUBLE_EQ(one.best_gbps, 100.0);
  EXPECT_DOUBLE_EQ(one.worst_gbps, 100.0);

  CopyMeasurement none;
  none.bytes = 1'000'000'000;
  Summarize(none);
  EXPECT_EQ(none.median_gbps, 0);
  EXPECT_EQ(none.best_gbps, 0);
  EXPECT_EQ(none.worst_gbps, 0);
}

TEST(Bandwidth, CompareWithGb10) {
  EXPECT_EQ(CompareWithGb10(150), Gb10Band::kBelow);
  EXPECT_EQ(CompareWithGb10(161.9), Gb10Band::kBelow);
  EXPECT_EQ(CompareWithGb10(162), Gb10Band::kWithin);
  EXPECT_EQ(CompareWithGb10(185), Gb10Band::kWithin);
  EXPECT_EQ(CompareWithGb10(192), Gb10Band::kWithin);
  EXPECT_EQ(CompareWithGb10(192.5), Gb10Band::kAbove);
  EXPECT_EQ(CompareWithGb10(200), Gb10Band::kAbove);
  EXPECT_EQ(CompareWithGb10(0), Gb10Band::kBelow);
}

TEST(Bandwidth, DescribeCopy) {
  // The header's example, figure for figure.
  CopyMeasurement m;
  m.bytes = 1'070'000'000;
  m.seconds.assign(10, 0.0116);
  m.median_gbps = 185.2;
  m.best_gbps = 186.0;
  m.worst_gbps = 184.1;
  EXPECT_EQ(EnglishText(DescribeCopy(m)),
            "185.2 GB/s median (fastest 186.0, slowest 184.1; 10 repeats of 1.07 GB)");

  m.seconds.assign(1, 0.0116);
  EXPECT_NE(EnglishText(DescribeCopy(m)).find("; 1 repeat of 1.07 GB)"), std::string::npos)
      << EnglishText(DescribeCopy(m));
}

TEST(Bandwidth, MeasureHostCopySmall) {
  HostCopyOptions options;
  options.bytes = 1 << 20;
  options.threads = 2;
  options.repeats = 3;
  auto m = MeasureHostCopy(options);
  ASSERT_TRUE(m) << EnglishText(m.error().what);
  EXPECT_EQ(m->bytes, 1u << 20);
  EXPECT_EQ(m->threads, 2);
  EXPECT_NE(EnglishText(m->what).find("2 threads"), std::string::npos) << EnglishText(m->what);
  ASSERT_EQ(m->seconds.size(), 3u);
  for (double s : m->seconds) EXPECT_GT(s, 0);
  EXPECT_GT(m->median_gbps, 0);
  EXPECT_GE(m->best_gbps, m->median_gbps);
  EXPECT_LE(m->worst_gbps, m->median_gbps);
}

TEST(Bandwidth, MeasureHostCopyRejectsInvalidOptions) {
  HostCopyOptions no_threads;
  no_threads.bytes = 1 << 20;
  no_threads.threads = 0;
  no_threads.repeats = 3;
  EXPECT_FALSE(MeasureHostCopy(no_threads));

  HostCopyOptions negative_threads = no_threads;
  negative_threads.threads = -1;
  EXPECT_FALSE(MeasureHostCopy(negative_threads));

  HostCopyOptions no_repeats;
  no_repeats.bytes = 1 << 20;
  no_repeats.threads = 2;
  no_repeats.repeats = 0;
  EXPECT_FALSE(MeasureHostCopy(no_repeats));

  HostCopyOptions tiny;
  tiny.bytes = 100;
  tiny.threads = 2;
  tiny.repeats = 3;
  auto r = MeasureHostCopy(tiny);
  ASSERT_FALSE(r);
  EXPECT_FALSE(EnglishText(r.error().what).empty());
}

// The report of MeasureBandwidth as --json writes it: a literal host copy, one device copy
// judged against GB10's range, one that failed.
TEST(Bandwidth, ReportJsonHasEachCopyAndEachError) {
  CopyMeasurement host;
  host.what = Msg("host memory ({} threads)", 2);
  host.bytes = 1000;
  host.threads = 2;
  host.seconds = {1e-5};
  Summarize(host);
  CopyMeasurement device = host;
  device.what = Msg("device {}: {}", 0, "NVIDIA GB10");
  device.threads = 0;
  device.median_gbps = 185;
  BandwidthReport r;
  r.host = CopyOutcome{host, {}};
  r.devices.push_back({0, {device, {}}, true});
  r.devices.push_back({1, {std::nullopt, Msg("cuda: cuMemAlloc: out of memory")}, false});
  const auto j = BandwidthToJson(r);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["host"]["what"], "host memory (2 threads)");
  EXPECT_EQ(j["host"]["bytes"], 1000);
  EXPECT_DOUBLE_EQ(j["host"]["median_gbps"].get<double>(), host.median_gbps);
  EXPECT_EQ(j["device"][0]["index"], 0);
  EXPECT_EQ(j["device"][0]["gb10_band"],
            "within GB10's measured 180-192 GB/s (the 273 GB/s spec is not reached by copies)");
  EXPECT_EQ(j["device"][1],
            nlohmann::ordered_json({{"index", 1}, {"error", "cuda: cuMemAlloc: out of memory"}}));
  EXPECT_FALSE(j.contains("device_error"));
}

TEST(Bandwidth, NoLibcudaIsTheDeviceErrorAndNoDeviceList) {
  BandwidthOptions o;
  o.host = false;
  o.cuda_lib = "/nonexistent/libcuda.so.1";
  const BandwidthReport r = MeasureBandwidth(o);
  EXPECT_FALSE(r.host);
  EXPECT_TRUE(r.devices.empty());
  const auto j = BandwidthToJson(r);
  EXPECT_FALSE(j.contains("host"));
  EXPECT_FALSE(j.contains("device"));
  EXPECT_TRUE(
      j["device_error"].get<std::string>().starts_with("cuda: dlopen(/nonexistent/libcuda.so.1): "))
      << j.dump();
}

#ifdef HEADROOM_FAKE_CUDA_PATH
TEST(Bandwidth, MeasuresTheHostAndEachDeviceOfTheFakeDriver) {
  BandwidthOptions o;
  o.host_copy = {1 << 20, 1, 1};
  o.cuda_lib = HEADROOM_FAKE_CUDA_PATH;  // scenario gb10 unless a script says otherwise
  o.device_bytes = 1 << 20;
  o.repeats = 2;
  const BandwidthReport r = MeasureBandwidth(o);
  ASSERT_TRUE(r.host && r.host->copy);
  EXPECT_EQ(r.host->copy->seconds.size(), 1u);
  EXPECT_TRUE(r.device_error.empty()) << EnglishText(r.device_error);
  ASSERT_EQ(r.devices.size(), 1u);
  ASSERT_TRUE(r.devices[0].outcome.copy);
  EXPECT_EQ(r.devices[0].outcome.copy->seconds.size(), 2u);
  EXPECT_EQ(r.devices[0].gb10, std::getenv("HEADROOM_FAKE_CUDA_SCRIPT") == nullptr);
}
#endif

TEST(Bandwidth, HostCopyIsHeldToAnEighthOfMemAvailable) {
  EXPECT_EQ(CapHostCopyBytes(kGiB, 16 * kGiB).bytes, kGiB);  // exactly 1/8: kept
  EXPECT_FALSE(CapHostCopyBytes(kGiB, 16 * kGiB).lowered);
  const HostCopySize capped = CapHostCopyBytes(4 * kGiB, 16 * kGiB);
  EXPECT_EQ(capped.bytes, 2 * kGiB);
  EXPECT_TRUE(capped.lowered);
  EXPECT_EQ(CapHostCopyBytes(4 * kGiB, 0).bytes, 4 * kGiB);  // MemAvailable unknown
  EXPECT_FALSE(CapHostCopyBytes(4 * kGiB, 0).lowered);
}

TEST(Bandwidth, NoDeviceFailsOnlyWhenTheDevicesWereAllThatWasAsked) {
  BandwidthReport r;
  r.host = CopyOutcome{CopyMeasurement{}, {}};
  EXPECT_FALSE(BandwidthFailed(r, false));
  r.device_error = Msg("no CUDA device");
  EXPECT_FALSE(BandwidthFailed(r, false));
  EXPECT_TRUE(BandwidthFailed(r, true));
  BandwidthReport host_failed;
  host_failed.host = CopyOutcome{std::nullopt, Msg("cannot allocate")};
  EXPECT_TRUE(BandwidthFailed(host_failed, false));
  BandwidthReport device_failed;
  device_failed.devices.push_back({0, CopyOutcome{std::nullopt, Msg("cuMemAlloc failed")}, true});
  EXPECT_TRUE(BandwidthFailed(device_failed, false));
}

}  // namespace
}  // namespace headroom
