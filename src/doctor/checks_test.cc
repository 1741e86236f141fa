// The checks as pure functions of literal facts: the verdict rules of docs/doctor.md, case by
// case. The fixture machines run the same functions end to end in tests/cli/doctor_cli_test.cc.
#include "doctor/checks.h"

#include <gtest/gtest.h>

#include "doctor_facts.h"

namespace headroom {
namespace {

using testing::Gb10Facts;
using testing::Gpu;
using testing::Torch;

TEST(DoctorChecks, CudaAbiVerdicts) {
  DoctorFacts f = Gb10Facts();
  f.torch = Torch("2.9.0+cu130", "13.0");
  EXPECT_EQ(CheckCudaAbi(f).verdict, CheckVerdict::kPass);
  f.torch = Torch("2.9.0+cu132", "13.2");  // newer minor than the driver's 13.0
  EXPECT_EQ(CheckCudaAbi(f).verdict, CheckVerdict::kWarn);
  f.torch = Torch("2.7.0+cu128", "12.8");
  EXPECT_EQ(CheckCudaAbi(f).verdict, CheckVerdict::kFail);
  f.torch = Torch("2.7.0+cpu", std::nullopt);
  EXPECT_EQ(EnglishText(CheckCudaAbi(f).summary),
            "torch 2.7.0+cpu is a CPU build: it will not use the GPU");
  f.torch = Torch("2.7.0", "twelve");
  EXPECT_EQ(CheckCudaAbi(f).verdict, CheckVerdict::kSkip);
  f.torch.reset();
  EXPECT_EQ(CheckCudaAbi(f).verdict, CheckVerdict::kInfo);  // not installed
  // Two registered runtime majors turn info or pass into a warning, never a fail into less.
  f.cudart[12].push_back({12, "/a/libcudart.so.12"});
  f.cudart[13].push_back({13, "/b/libcudart.so.13"});
  EXPECT_EQ(CheckCudaAbi(f).verdict, CheckVerdict::kWarn);
  f.torch = Torch("2.7.0+cu128", "12.8");
  EXPECT_EQ(CheckCudaAbi(f).verdict, CheckVerdict::kFail);
  f.python.reset();
  f.python_error = "no Python environment found";
  EXPECT_EQ(CheckCudaAbi(f).verdict, CheckVerdict::kSkip);
}

TEST(DoctorChecks, FlashAttnDependsOnThePlatform) {
  DoctorFacts f = Gb10Facts();
  EXPECT_EQ(CheckFlashAttn(f).verdict, CheckVerdict::kPass);
  f.distributions.emplace("flash-attn", Distribution{"flash_attn", "2.7.4", "/m"});
  EXPECT_EQ(CheckFlashAttn(f).verdict, CheckVerdict::kWarn);
  f.gpus = {Gpu("NVIDIA H100", 12080, 9, 0)};
  f.platform = DetectPlatform(f.gpus);
  EXPECT_EQ(CheckFlashAttn(f).verdict, CheckVerdict::kPass);
  f.gpus.clear();
  f.platform = DetectPlatform(f.gpus);
  EXPECT_EQ(CheckFlashAttn(f).verdict, CheckVerdict::kInfo);
}

TEST(DoctorChecks, PageCacheWarnsFromTenPercentOfMemTotal) {
  DoctorFacts f;
  // MemTotal 100 GiB; cache 9.9 GiB passes, 10 GiB warns.
  auto meminfo = [](uint64_t cached_kb) {
    return ParseMemInfo(
        "MemTotal: 104857600 kB\nMemFree: 50000000 kB\nMemAvailable: 80000000 kB\nCached: " +
        std::to_string(cached_kb) + " kB\nBuffers: 0 kB\nSReclaimable: 0 kB\nShmem: 0 kB\n");
  };
  f.meminfo = meminfo(10380902);
  EXPECT_EQ(CheckUmaHeadroom(f).verdict, CheckVerdict::kPass);
  f.meminfo = meminfo(10485760);
  const auto r = CheckUmaHeadroom(f);
  EXPECT_EQ(r.verdict, CheckVerdict::kWarn);
  EXPECT_EQ(EnglishText(r.summary), "10.00 GiB page cache (MemAvailable 76.29 GiB of 100.00 GiB)");
  f.meminfo.reset();
  f.meminfo_error = "cannot read proc/meminfo";
  EXPECT_EQ(CheckUmaHeadroom(f).verdict, CheckVerdict::kSkip);
}

TEST(DoctorChecks, DegradedClockBandWarnsOnlyUnderLoad) {
  DoctorFacts f = Gb10Facts();
  f.gpus[0].sm_clock_mhz = 700;
  f.gpus[0].clock_event_reasons = 0;
  f.gpus[0].gpu_utilization_pct = 5;  // idle: a low clock means nothing
  EXPECT_EQ(CheckThermal(f).verdict, CheckVerdict::kPass);
  f.gpus[0].gpu_utilization_pct = 96;
  EXPECT_EQ(CheckThermal(f).verdict, CheckVerdict::kWarn);
  f.gpus[0].sm_clock_mhz = 2405;
  f.gpus[0].temperature_c = 86;
  EXPECT_EQ(EnglishText(CheckThermal(f).summary), "GPU at 86 °C");
  f.gpus[0].temperature_c = 84;
  f.gpus[0].power_mw = 99'500;
  const auto r = CheckThermal(f);
  EXPECT_EQ(r.verdict, CheckVerdict::kPass);
  EXPECT_EQ(EnglishText(r.summary),
            "84 °C, 99.5 W (100 % of the 100 W sustained figure; rated 240 W), SM 2405 MHz, no "
            "clock-event reason");
}

TEST(DoctorChecks, TensorParallelismWithinOneMachineIsInfoAcrossMachinesFails) {
  DoctorFacts f;
  for (int i = 0; i < 8; ++i) f.gpus.push_back(Gpu("NVIDIA H100", 12080, 9, 0));
  f.platform = DetectPlatform(f.gpus);
  f.configs.push_back({"serve.yaml", {{"tensor_parallel_size", 4, 2}}, ""});
  EXPECT_EQ(CheckMultiNode(f).verdict, CheckVerdict::kInfo);
  f.nnodes = "2";
  EXPECT_EQ(CheckMultiNode(f).verdict, CheckVerdict::kFail);
  f.nnodes.reset();
  f.configs[0].settings[0].value = 16;  // more than this machine's 8 GPUs
  EXPECT_EQ(CheckMultiNode(f).verdict, CheckVerdict::kFail);
  f.configs[0].settings[0].value = 1;
  EXPECT_EQ(CheckMultiNode(f).verdict, CheckVerdict::kPass);
  f.configs.push_back({"missing.yaml", {}, "cannot read missing.yaml"});
  EXPECT_EQ(CheckMultiNode(f).verdict, CheckVerdict::kSkip);
  // On a Spark any tensor parallelism above 1 spans machines.
  DoctorFacts g = Gb10Facts();
  g.configs.push_back({"tp.yaml", {{"tp_size", 2, 1}}, ""});
  EXPECT_EQ(CheckMultiNode(g).verdict, CheckVerdict::kFail);
}

TEST(DoctorChecks, OverallVerdictAndExitStatus) {
  std::vector<CheckResult> checks(3);
  for (auto& c : checks) c.verdict = CheckVerdict::kPass;
  checks[1].verdict = CheckVerdict::kInfo;
  EXPECT_EQ(OverallVerdict(checks, std::nullopt), DoctorVerdict::kReady);
  WorkloadFacts w;
  w.verdict = "tight";
  EXPECT_EQ(OverallVerdict(checks, w), DoctorVerdict::kReadyWithWarnings);
  w.verdict = "does not fit";
  EXPECT_EQ(OverallVerdict(checks, w), DoctorVerdict::kBlocked);
  checks[2].verdict = CheckVerdict::kSkip;
  EXPECT_EQ(OverallVerdict(checks, std::nullopt), DoctorVerdict::kReadyWithWarnings);
  checks[0].verdict = CheckVerdict::kFail;
  EXPECT_EQ(OverallVerdict(checks, std::nullopt), DoctorVerdict::kBlocked);
  EXPECT_EQ(ExitStatusFor(DoctorVerdict::kReady), 0);
  EXPECT_EQ(ExitStatusFor(DoctorVerdict::kReadyWithWarnings), 1);
  EXPECT_EQ(ExitStatusFor(DoctorVerdict::kBlocked), 2);
}

TEST(DoctorChecks, ReportShapeFollowsTheIssue) {
  DoctorFacts f = Gb10Facts();
  f.torch = Torch("2.7.0+cu128", "12.8");
  const auto checks = RunChecks(f);
  ASSERT_EQ(checks.size(), 11u);
  for (size_t i = 0; i < checks.size(); ++i) EXPECT_EQ(checks[i].id, "G" + std::to_string(i + 1));
  const auto j = ReportJson(f, checks, OverallVerdict(checks, std::nullopt));
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["verdict"], "blocked");
  EXPECT_EQ(j["checks"]["G1"], "fail: torch CUDA 12.8 vs driver CUDA 13.0: major mismatch");
  EXPECT_EQ(j["checks"]["G8"],
            "info: offline: known breakage not checked (see the links to check by hand)");
  EXPECT_TRUE(j["headroom_gb"].is_null());
  WorkloadFacts w;
  w.peak_bytes = 40'000'000'000;
  w.budget_bytes = 100'000'000'000;
  w.verdict = "fits";
  f.workload = w;
  EXPECT_DOUBLE_EQ(ReportJson(f, checks, DoctorVerdict::kReady)["headroom_gb"].get<double>(), 60.0);
}

TEST(DoctorChecks, ReportTextIsTheIndentedJsonWithANewline) {
  DoctorFacts f = Gb10Facts();
  f.torch = Torch("2.7.0+cu128", "12.8");
  const auto checks = RunChecks(f);
  const std::string text = ReportJsonText(f, checks, DoctorVerdict::kBlocked);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.rfind("{\n  \"schema_version\": 1,", 0), 0u);
  EXPECT_EQ(nlohmann::ordered_json::parse(text), ReportJson(f, checks, DoctorVerdict::kBlocked));
  // A byte that is not UTF-8 (in a library's error text, say) is replaced, not thrown.
  f.gpu_error = "bad\xff";
  EXPECT_NE(ReportJsonText(f, checks, DoctorVerdict::kBlocked).find("bad\xEF\xBF\xBD"),
            std::string::npos);
}

}  // namespace
}  // namespace headroom
