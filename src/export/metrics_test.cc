#include "export/metrics.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "export/guarded_jobs.h"
#include "sys/pool_levels.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::Contains;

GpuReading Gb10Reading() {
  GpuReading g;
  g.name = "NVIDIA GB10";
  g.driver_version = "580.95.05";
  g.cuda_driver_version = 13000;
  g.temperature_c = 61;
  g.power_mw = 99'500;
  g.energy_mj = 5'000'000;
  g.sm_clock_mhz = 2405;
  g.clock_event_reasons = 0x4;  // sw_power_cap
  g.gpu_utilization_pct = 96;
  g.processes = std::vector<GpuProcess>{{4242, 63'931ULL << 20}, {4343, std::nullopt}};
  return g;
}

ExportSnapshot Gb10Snapshot() {
  ExportSnapshot s;
  s.meminfo = ParseMemInfo(
      "MemTotal: 127600748 kB\nMemFree: 100000000 kB\nMemAvailable: 120000000 kB\n"
      "Cached: 1000 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n");
  s.psi = ParsePsi(
              "some avg10=1.50 avg60=0.00 avg300=0.00 total=2500000\nfull avg10=0.00 avg60=0.00 "
              "avg300=0.00 total=100\n")
              .value();
  s.gpus = {Gb10Reading()};
  s.platform = DetectPlatform(s.gpus);
  s.arch = "aarch64";
  s.version = "0.1.0";
  s.process_names[4242] = "vllm";
  return s;
}

TEST(ExportMetrics, Gb10MemoryComesFromMeminfoWithALabelNeverZero) {
  const std::string text = RenderPrometheus(BuildFamilies(Gb10Snapshot()));
  EXPECT_TRUE(Contains(text,
                       "headroom_gpu_memory_total_bytes{gpu=\"0\",name=\"NVIDIA "
                       "GB10\",source=\"meminfo\"} 130663165952\n"))
      << text;
  // MemTotal - MemAvailable = 7600748 kB.
  EXPECT_TRUE(Contains(text,
                       "headroom_gpu_memory_used_bytes{gpu=\"0\",name=\"NVIDIA "
                       "GB10\",source=\"meminfo\"} 7783165952\n"))
      << text;
  EXPECT_FALSE(Contains(text, "source=\"nvml\"")) << text;
  EXPECT_TRUE(Contains(
      text,
      "headroom_gpu_power_limit_watts{gpu=\"0\",name=\"NVIDIA GB10\",kind=\"sustained\"} 100\n"));
  EXPECT_TRUE(Contains(
      text, "headroom_gpu_power_limit_watts{gpu=\"0\",name=\"NVIDIA GB10\",kind=\"rated\"} 240\n"));
  EXPECT_TRUE(Contains(text, "headroom_gpu_power_watts{gpu=\"0\",name=\"NVIDIA GB10\"} 99.5\n"));
  EXPECT_TRUE(
      Contains(text, "headroom_gpu_energy_joules_total{gpu=\"0\",name=\"NVIDIA GB10\"} 5000\n"));
  EXPECT_TRUE(Contains(
      text, "headroom_gpu_clock_hertz{gpu=\"0\",name=\"NVIDIA GB10\",domain=\"sm\"} 2405000000\n"));
  EXPECT_TRUE(Contains(
      text, "headroom_gpu_utilization_ratio{gpu=\"0\",name=\"NVIDIA GB10\",kind=\"gpu\"} 0.96\n"));
  EXPECT_TRUE(Contains(text,
                       "headroom_gpu_clock_event_active{gpu=\"0\",name=\"NVIDIA "
                       "GB10\",reason=\"sw_power_cap\"} 1\n"));
  EXPECT_TRUE(Contains(text,
                       "headroom_gpu_clock_event_active{gpu=\"0\",name=\"NVIDIA "
                       "GB10\",reason=\"hw_slowdown\"} 0\n"));
  EXPECT_TRUE(Contains(text,
                       "headroom_gpu_process_memory_bytes{gpu=\"0\",name=\"NVIDIA "
                       "GB10\",pid=\"4242\",process=\"vllm\"} " +
                           std::to_string(63'931ULL << 20) + "\n"))
      << text;
  EXPECT_FALSE(Contains(text, "pid=\"4343\"")) << "a process without a figure is not exported as 0";
  EXPECT_TRUE(
      Contains(text, "headroom_memory_pressure_stalled_seconds_total{kind=\"some\"} 2.5\n"));
  EXPECT_TRUE(Contains(text, "headroom_memory_pressure_avg10_ratio{kind=\"some\"} 0.015\n"));
  EXPECT_TRUE(Contains(text, "headroom_memory_available_bytes{source=\"kernel\"} 122880000000\n"));
  EXPECT_TRUE(Contains(
      text,
      "headroom_platform_info{kind=\"gb10\",gpu=\"NVIDIA GB10\",driver=\"580.95.05\",cuda=\"13.0\","
      "memory_source=\"meminfo\",arch=\"aarch64\",version=\"0.1.0\"} 1\n"));
  EXPECT_FALSE(Contains(text, "headroom_guard_kills")) << "no journal, no guard counters";
}

TEST(ExportMetrics, DiscreteMemoryComesFromNvml) {
  ExportSnapshot s = Gb10Snapshot();
  s.gpus[0].name = "NVIDIA H200";
  s.gpus[0].memory_total_bytes = 150'754'820'096ULL;
  s.gpus[0].memory_used_bytes = 85'899'345'920ULL;
  s.gpus[0].enforced_power_limit_mw = 700'000;
  s.platform = DetectPlatform(s.gpus);
  const std::string text = RenderPrometheus(BuildFamilies(s));
  EXPECT_TRUE(Contains(text,
                       "headroom_gpu_memory_used_bytes{gpu=\"0\",name=\"NVIDIA "
                       "H200\",source=\"nvml\"} 85899345920\n"))
      << text;
  EXPECT_FALSE(Contains(text, "source=\"meminfo\"}")) << text;
  EXPECT_TRUE(Contains(text, "kind=\"enforced\"} 700\n")) << text;
  EXPECT_FALSE(Contains(text, "kind=\"sustained\"")) << text;
}

// The names and labels NVIDIA's DCGM dashboard queries (docs/export.md), in DCGM's units.
TEST(ExportMetrics, DcgmNamesOnGb10TakeTheFramebufferFromThePool) {
  ExportSnapshot s = Gb10Snapshot();
  s.gpus[0].uuid = "GPU-5e3c";
  s.gpus[0].mem_clock_mhz = 4266;
  s.hostname = "spark-1";
  const std::string text = RenderPrometheus(BuildFamilies(s));
  const std::string id = "{gpu=\"0\",UUID=\"GPU-5e3c\",device=\"nvidia0\",Hostname=\"spark-1\"}";
  EXPECT_TRUE(
      Contains(text, "# TYPE DCGM_FI_DEV_GPU_TEMP gauge\nDCGM_FI_DEV_GPU_TEMP" + id + " 61\n"))
      << text;
  EXPECT_TRUE(Contains(text, "DCGM_FI_DEV_POWER_USAGE" + id + " 99.5\n")) << text;
  EXPECT_TRUE(Contains(text, "DCGM_FI_DEV_SM_CLOCK" + id + " 2405\n")) << text;
  EXPECT_TRUE(Contains(text, "DCGM_FI_DEV_MEM_CLOCK" + id + " 4266\n")) << text;
  EXPECT_TRUE(Contains(text, "DCGM_FI_DEV_GPU_UTIL" + id + " 96\n")) << text;
  // MemAvailable 120000000 kB = 117187.5 MiB free; MemTotal - MemAvailable 7600748 kB used.
  EXPECT_TRUE(Contains(text, "DCGM_FI_DEV_FB_FREE" + id + " 117187\n")) << text;
  EXPECT_TRUE(Contains(text, "DCGM_FI_DEV_FB_USED" + id + " 7422\n")) << text;
  // NVML reports no memory utilization here: no sample, not a 0.
  EXPECT_FALSE(Contains(text, "DCGM_FI_DEV_MEM_COPY_UTIL")) << text;
}

TEST(ExportMetrics, DcgmNamesOnADiscreteGpuTakeNvmlsMemoryAndCanBeTurnedOff) {
  ExportSnapshot s = Gb10Snapshot();
  s.gpus[0].name = "NVIDIA H200";
  s.gpus[0].memory_total_bytes = 150'754'820'096ULL;
  s.gpus[0].memory_used_bytes = 85'899'345'920ULL;  // 81920 MiB
  s.gpus[0].memory_free_bytes = 64'424'509'440ULL;  // 61440 MiB
  s.gpus[0].memory_utilization_pct = 40;
  s.platform = DetectPlatform(s.gpus);
  std::string text = RenderPrometheus(BuildFamilies(s));
  const std::string id = "{gpu=\"0\",UUID=\"\",device=\"nvidia0\",Hostname=\"\"}";
  EXPECT_TRUE(Contains(text, "DCGM_FI_DEV_FB_USED" + id + " 81920\n")) << text;
  EXPECT_TRUE(Contains(text, "DCGM_FI_DEV_FB_FREE" + id + " 61440\n")) << text;
  EXPECT_TRUE(Contains(text, "DCGM_FI_DEV_MEM_COPY_UTIL" + id + " 40\n")) << text;
  s.dcgm_names = false;
  text = RenderPrometheus(BuildFamilies(s));
  EXPECT_FALSE(Contains(text, "DCGM_")) << text;
  EXPECT_TRUE(Contains(text, "headroom_gpu_memory_used_bytes")) << text;
}

TEST(ExportMetrics, ThrottleSecondsAccumulatePerReasonFromTheFirstSample) {
  ThrottleAccumulator acc;
  std::vector<GpuReading> gpus = {Gb10Reading()};
  gpus[0].clock_event_reasons = 0x1;  // idle only: not a slowdown
  acc.Add(gpus, 1.0);
  EXPECT_EQ(acc.seconds().at(0).at("sw_power_cap"), 0.0);  // present at 0 from the start
  EXPECT_EQ(acc.seconds().at(0).count("gpu_idle"), 0u);
  gpus[0].clock_event_reasons = 0x24;  // sw_power_cap + sw_thermal_slowdown
  acc.Add(gpus, 2.0);
  acc.Add(gpus, 2.0);
  EXPECT_DOUBLE_EQ(acc.seconds().at(0).at("sw_power_cap"), 4.0);
  EXPECT_DOUBLE_EQ(acc.seconds().at(0).at("sw_thermal_slowdown"), 4.0);
  EXPECT_DOUBLE_EQ(acc.seconds().at(0).at("hw_slowdown"), 0.0);
  ExportSnapshot s = Gb10Snapshot();
  s.throttle_seconds = acc.seconds();
  EXPECT_TRUE(Contains(RenderPrometheus(BuildFamilies(s)),
                       "headroom_gpu_throttle_seconds_total{gpu=\"0\",name=\"NVIDIA "
                       "GB10\",reason=\"sw_power_cap\"} 4\n"));
}

TEST(ExportMetrics, GuardCountersAndFormats) {
  ExportSnapshot s = Gb10Snapshot();
  s.guard = GuardCounters{5, 2, 7, 1, 3, 4};
  s.requests_by_code = {{200, 10}, {404, 1}};
  const auto families = BuildFamilies(s);
  const std::string prom = RenderPrometheus(families);
  EXPECT_TRUE(
      Contains(prom, "# TYPE headroom_guard_kills_total counter\nheadroom_guard_kills_total 2\n"))
      << prom;
  EXPECT_TRUE(Contains(prom, "headroom_guard_warnings_total 7\n"));
  EXPECT_TRUE(Contains(prom, "headroom_sweep_trials_killed_total 1\n"));
  EXPECT_TRUE(Contains(prom,
                       "# TYPE headroom_guardian_kills_total counter\n"
                       "headroom_guardian_kills_total 3\n"))
      << prom;
  EXPECT_TRUE(Contains(prom, "headroom_guardian_warnings_total 4\n"));
  EXPECT_TRUE(Contains(prom, "headroom_exporter_http_requests_total{code=\"404\"} 1\n"));
  EXPECT_FALSE(Contains(prom, "# EOF"));
  const std::string om = RenderOpenMetrics(families);
  EXPECT_TRUE(Contains(om, "# TYPE headroom_guard_kills counter\n# HELP headroom_guard_kills "))
      << om;
  EXPECT_TRUE(Contains(om, "\nheadroom_guard_kills_total 2\n"));
  EXPECT_TRUE(Contains(
      om, "# TYPE headroom_memory_total_bytes gauge\n# UNIT headroom_memory_total_bytes bytes\n"));
  EXPECT_TRUE(om.ends_with("# EOF\n"));
}

TEST(ExportMetrics, GuardLevelsStepsAndDefaults) {
  ExportSnapshot s = Gb10Snapshot();
  s.guarded.push_back({7, "guard", 10'000'000'000, 20'000'000'000, 42, 1'700'000'000.5});
  s.guarded.push_back({9, "sweep", 5'000'000'000, 0, std::nullopt, std::nullopt});
  const std::string prom = RenderPrometheus(BuildFamilies(s));
  EXPECT_TRUE(Contains(prom,
                       "headroom_guard_level_bytes{run=\"7\",kind=\"guard\",level=\"warn\"} "
                       "20000000000\n"))
      << prom;
  EXPECT_TRUE(Contains(prom,
                       "headroom_guard_level_bytes{run=\"9\",kind=\"sweep\",level=\"kill\"} "
                       "5000000000\n"));
  EXPECT_FALSE(Contains(prom, "run=\"9\",kind=\"sweep\",level=\"warn\"")) << "no warning level";
  EXPECT_TRUE(Contains(prom, "headroom_guard_steps_total{run=\"7\",kind=\"guard\"} 42\n"));
  EXPECT_FALSE(Contains(prom, "headroom_guard_steps_total{run=\"9\"")) << "no records known";
  EXPECT_TRUE(Contains(prom,
                       "headroom_guard_last_step_timestamp_seconds{run=\"7\",kind=\"guard\"} "
                       "1700000000.5\n"));
  // The defaults from MemTotal: the kill level of sys/pool_levels.h, the warning twice it.
  const uint64_t kill = DefaultKillLevelBytes(*s.meminfo->total_bytes());
  EXPECT_TRUE(Contains(
      prom, fmt::format("headroom_guard_default_level_bytes{{level=\"kill\"}} {}\n", kill)))
      << prom;
  EXPECT_TRUE(Contains(
      prom, fmt::format("headroom_guard_default_level_bytes{{level=\"warn\"}} {}\n", 2 * kill)));
}

TEST(ExportMetrics, StepsCountRankZeroOnly) {
  StepCount count;
  const auto records = ParseCompanionRecords(
      "{\"schema\":\"headroom.step/1\",\"kind\":\"step\",\"pid\":5,\"rank\":0,\"wall\":10,"
      "\"mono\":1,\"step\":1}\n"
      "{\"schema\":\"headroom.step/1\",\"kind\":\"step\",\"pid\":6,\"rank\":1,\"wall\":11,"
      "\"mono\":1,\"step\":1}\n"
      "{\"schema\":\"headroom.step/1\",\"kind\":\"step\",\"pid\":5,\"rank\":0,\"wall\":12,"
      "\"mono\":2,\"step\":2}\n");
  ASSERT_EQ(records.records.size(), 3u) << EnglishText(records.first_error);
  CountSteps(records.records, count);
  EXPECT_EQ(count.steps, 2u);
  EXPECT_EQ(count.last_wall_s, 12.0);
}

TEST(ExportMetrics, LabelValuesAreEscaped) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  ExportSnapshot s = Gb10Snapshot();
  s.process_names[4242] = "evil\"}\nheadroom_guard_kills_total 99";
  const std::string text = RenderPrometheus(BuildFamilies(s));
  EXPECT_TRUE(Contains(text, "process=\"evil\\\"}\\nheadroom_guard_kills_total 99\"}")) << text;
  EXPECT_FALSE(Contains(text, "\nheadroom_guard_kills_total 99")) << text;
}

TEST(ExportMetrics, NoGpuNoMeminfoStillRendersTheRest) {
  ExportSnapshot s;
  s.arch = "x86_64";
  const std::string text = RenderPrometheus(BuildFamilies(s));
  EXPECT_FALSE(Contains(text, "headroom_gpu_")) << text;
  EXPECT_FALSE(Contains(text, "headroom_memory_total_bytes")) << text;
  EXPECT_TRUE(Contains(text, "headroom_platform_info{kind=\"none\""));
}

}  // namespace
}  // namespace headroom
