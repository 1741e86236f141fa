#include "samples/sampler.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "gpu/nvml.h"
#include "testing_files.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;

const SysRoot kGb10Idle(fs::path(testing::FixturePath("gb10-idle")));

TEST(ProcStatCpu, ParsesTheAggregateLine) {
  auto t = ParseProcStatCpu("cpu  100 5 50 1000 20 3 2 1 40 0\ncpu0 1 2 3 4\n");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->busy, 100u + 5 + 50 + 3 + 2 + 1);
  EXPECT_EQ(t->idle, 1000u + 20);
  // Old kernels: four fields.
  auto old = ParseProcStatCpu("cpu 1 2 3 4\n");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->busy, 6u);
  EXPECT_FALSE(ParseProcStatCpu("cpu0 1 2 3 4\n"));
  EXPECT_FALSE(ParseProcStatCpu("cpu  1 2 3\n"));
  EXPECT_FALSE(ParseProcStatCpu("cpu  1 x 3 4\n"));
  EXPECT_FALSE(ParseProcStatCpu(""));
}

TEST(ProcStatCpu, UtilFromDeltas) {
  EXPECT_DOUBLE_EQ(*CpuUtilPercent({100, 900}, {150, 950}), 50.0);
  EXPECT_FALSE(CpuUtilPercent({100, 900}, {100, 900}));  // no tick passed
  EXPECT_FALSE(CpuUtilPercent({100, 900}, {90, 950}));   // went backwards
}

TEST(Sampler, WithoutGpuReadsMeminfoPsiAndSensorsFromTheRoot) {
  Sampler sampler(kGb10Idle, nullptr);
  EXPECT_FALSE(sampler.has_gpu());
  EXPECT_EQ(sampler.platform().kind, PlatformKind::kNoGpu);
  const Sample s = sampler.Read(WallTime(std::chrono::seconds(1)));
  EXPECT_FALSE(s.temperature_c || s.power_mw || s.sm_clock_mhz || s.clock_event_reasons);
  EXPECT_EQ(s.mem_total_bytes, 127'600'748ULL * 1024);
  EXPECT_TRUE(s.mem_available_bytes.has_value());
  EXPECT_TRUE(s.psi_some_avg10_pct.has_value());
  EXPECT_FALSE(s.cpu_util_pct.has_value());  // the fixture has no proc/stat
  const auto& columns = sampler.extra_columns();
  ASSERT_EQ(s.extra.size(), columns.size());
  auto find = [&](std::string_view name) -> std::optional<double> {
    for (size_t i = 0; i < columns.size(); ++i) {
      if (columns[i].name == name) return s.extra[i];
    }
    ADD_FAILURE() << "no column " << name;
    return std::nullopt;
  };
  EXPECT_TRUE(find("hwmon.spbm.sys_total.power").has_value());
  EXPECT_TRUE(find("hwmon.spbm.prochot").has_value());
  for (const auto& c : columns) {
    EXPECT_EQ(c.name.find_first_of(",\" \n"), std::string::npos) << c.name;
    EXPECT_FALSE(c.unit.empty());
  }
  EXPECT_TRUE(std::any_of(sampler.notes().begin(), sampler.notes().end(),
                          [](const std::string& n) { return n.starts_with("proc/stat"); }));
}

TEST(Sampler, ReadsTheRealProcCheaplyTwice) {
  Sampler sampler(SysRoot("/"), nullptr);
  (void)sampler.Read(std::chrono::system_clock::now());
  ::usleep(20'000);
  const Sample s = sampler.Read(std::chrono::system_clock::now());
  EXPECT_TRUE(s.mem_total_bytes.has_value());
  EXPECT_TRUE(s.cpu_util_pct.has_value());
}

TEST(Sampler, FakeGb10GivesGpuFieldsAndProfile) {
  const fs::path script =
      fs::temp_directory_path() / ("headroom-sampler-nvml-" + std::to_string(::getpid()) + ".txt");
  std::ofstream(script) << "scenario gb10\ndegrade_after 3\n";
  ::setenv("HEADROOM_FAKE_NVML_SCRIPT", script.c_str(), 1);
  {
    auto nvml = Nvml::Open(HEADROOM_FAKE_NVML_PATH);
    ASSERT_TRUE(nvml.ok()) << EnglishText(nvml.error().what);
    Sampler sampler(kGb10Idle, std::move(*nvml));
    EXPECT_TRUE(sampler.has_gpu());
    EXPECT_EQ(sampler.platform().kind, PlatformKind::kGb10);
    std::vector<Sample> samples;
    for (int i = 0; i < 4; ++i) samples.push_back(sampler.Read(WallTime{}));
    EXPECT_GT(*samples[3].temperature_c, *samples[0].temperature_c);
    EXPECT_EQ(samples[0].sm_clock_mhz, 2405u);
    EXPECT_EQ(samples[3].sm_clock_mhz, 700u);
    EXPECT_FALSE(samples[0].mem_clock_mhz.has_value());            // GB10: not supported
    EXPECT_FALSE(samples[0].gpu_memory_total_bytes.has_value());   // unified memory
    EXPECT_EQ(samples[0].mem_total_bytes, 127'600'748ULL * 1024);  // from meminfo
    ASSERT_TRUE(samples[0].gpu_pids.has_value());
    EXPECT_EQ(*samples[0].gpu_pids, std::vector<uint32_t>{4242});
  }
  ::unsetenv("HEADROOM_FAKE_NVML_SCRIPT");
  fs::remove(script);
}

}  // namespace
}  // namespace headroom
