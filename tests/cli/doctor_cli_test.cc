// `headroom doctor` and `headroom bandwidth` through the real binary: four fixture machines
// (tests/fixtures/doctor: GB10, discrete GPU, bare CPU, container) with the fake NVML and
// fake libcuda scenarios, a fake Python environment (torch cu128, flash-attn), configs with
// and without tensor parallelism, the report file, exit statuses and usage errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "run_cli.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::RunCli;
const std::string kDir = testing::FixturePath("doctor");
const std::string kEnv = kDir + "/env";

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The scripts for the fake NVML and the fake libcuda, and the environment naming them.
struct Fakes {
  testing::TempDir dir{"doctor-fakes"};
  std::vector<std::string> env;
  Fakes(const std::string& nvml_script, const std::string& cuda_script) {
    testing::WriteFile(dir / "nvml", nvml_script);
    testing::WriteFile(dir / "cuda", cuda_script);
    env = {"HEADROOM_FAKE_NVML_SCRIPT=" + (dir / "nvml").string(),
           "HEADROOM_FAKE_CUDA_SCRIPT=" + (dir / "cuda").string(),
           // The checks read these: keep the test's own environment out of them.
           "WORLD_SIZE=", "NNODES=", "TORCH_CUDA_ARCH_LIST=", "container="};
  }
};

// The arguments every run shares: a box, the fakes, the fake environment, small copies.
std::vector<std::string> Args(const std::string& box, std::vector<std::string> extra = {}) {
  std::vector<std::string> a = {"doctor",
                                "--root",
                                kDir + "/" + box,
                                "--nvml-lib",
                                HEADROOM_FAKE_NVML_PATH,
                                "--cuda-lib",
                                HEADROOM_FAKE_CUDA_PATH,
                                "--python",
                                kEnv};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

nlohmann::json Report(const testing::CliResult& r) {
  try {
    return nlohmann::json::parse(r.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what() << "\n" << r.out << r.err;
    return {};
  }
}

std::string Check(const nlohmann::json& j, const std::string& id) {
  return j.contains("checks") && j["checks"].contains(id) ? j["checks"][id].get<std::string>()
                                                          : "(missing)";
}

TEST(DoctorCli, Gb10BoxIsBlockedByTheCudaMajorMismatchAndTensorParallelism) {
  Fakes fakes("scenario gb10\n", "scenario gb10\ncopy_gbps 185\n");
  testing::TempDir out("doctor-report");
  const std::string report = (out / "env-report.json").string();
  const auto r = RunCli(Args("gb10", {"--config", kDir + "/configs/tp2.yaml", "--report", report}),
                        60000, fakes.env);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  for (const char* part :
       {"platform: aarch64; NVIDIA GB10 (compute capability 12.1); driver 580.95.05, CUDA 13.0; "
        "GB10: yes",
        "kernel module: NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.95.05",
        "G1   fail CUDA ABI: torch CUDA 12.8 vs driver CUDA 13.0: major mismatch; libcudart .12 "
        "and .13 all registered",
        "libcudart.so.12 (/usr/local/cuda-12.8/targets/sbsa-linux/lib/libcudart.so.12)",
        "libcudart.so.13 (/usr/local/cuda-13.0/targets/sbsa-linux/lib/libcudart.so.13)",
        "/env/lib/python3.12/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12",
        "G2   warn flash-attn: flash-attn 2.7.4.post1 installed: no sm_121 kernels on GB10, use "
        "SDPA",
        "G3   warn UMA headroom:",
        "page cache",
        "drop_caches",
        "nvidia-smi shows this GPU's memory as [N/A]",
        "G5   pass bandwidth: device copy 185.0 GB/s, within GB10's measured 180-192 GB/s (spec "
        "273 GB/s)",
        "G6   warn contention: 1 process holds or will grab the pool: vllm pid 4242",
        "cap 0.50 (--gpu-memory-utilization)",
        "G7   warn precision: compute capability 12.1: torch built with CUDA 12.8 predates sm_121",
        "G8   info playbooks: offline",
        "G9   info container: bare host; torch 2.7.0+cu128",
        "G10  fail multi-node: tensor parallelism 2 across machines",
        "tp2.yaml:3 tensor_parallel_size = 2",
        "verdict: blocked (2 fail, 4 warn, 0 skip)",
        "report: "}) {
    EXPECT_TRUE(Contains(r.out, part)) << part << "\n" << r.out;
  }
  // The report file: the shape, and the same verdicts as the text.
  std::ifstream in(report);
  std::stringstream text;
  text << in.rdbuf();
  const auto j = nlohmann::json::parse(text.str());
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["verdict"], "blocked");
  EXPECT_EQ(j["platform"]["gb10"], true);
  EXPECT_EQ(j["platform"]["arch"], "aarch64");
  EXPECT_EQ(j["platform"]["compute_capability"], "12.1");
  EXPECT_EQ(j["platform"]["cuda_driver_version"], "13.0");
  EXPECT_TRUE(Check(j, "G1").starts_with("fail: torch CUDA 12.8 vs driver CUDA 13.0"))
      << Check(j, "G1");
  EXPECT_TRUE(Check(j, "G3").starts_with("warn: ")) << Check(j, "G3");
  EXPECT_EQ(Check(j, "G5"), "pass");
  EXPECT_TRUE(Check(j, "G10").starts_with("fail: ")) << Check(j, "G10");
  EXPECT_EQ(j["check_details"].size(), 10u);
  EXPECT_TRUE(j["headroom_gb"].is_null());  // no --workload
  EXPECT_FALSE(std::filesystem::exists(report + ".tmp"));
}

TEST(DoctorCli, DiscreteBoxPassesTheAbiAndWarnsOnClockReasons) {
  Fakes fakes("scenario discrete\n", "scenario discrete\n");
  const auto r = RunCli(Args("discrete", {"--json", "--config", kDir + "/configs/ddp.json"}), 60000,
                        fakes.env);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  const auto j = Report(r);
  EXPECT_EQ(j["verdict"], "ready-with-warnings");
  EXPECT_EQ(j["platform"]["gpu_name"], "NVIDIA H200");
  EXPECT_EQ(j["platform"]["gb10"], false);
  EXPECT_EQ(Check(j, "G1"), "pass");  // 12.8 on 12.8, one runtime registered
  EXPECT_EQ(Check(j, "G2"), "pass");  // flash-attn is fine on Hopper
  EXPECT_EQ(Check(j, "G3"), "pass");
  EXPECT_TRUE(Check(j, "G4").starts_with("warn: clocks held by sw_power_cap, sw_thermal_slowdown"))
      << Check(j, "G4");
  EXPECT_TRUE(Check(j, "G5").starts_with("info: device copy")) << Check(j, "G5");
  EXPECT_EQ(Check(j, "G7"), "info: compute capability 9.0");
  EXPECT_EQ(Check(j, "G10"), "pass");
  // G6: the fake lists pids 1111 and 2222, which this box's proc/ does not have.
  EXPECT_TRUE(Check(j, "G6").starts_with("warn: 2 processes")) << Check(j, "G6");
}

TEST(DoctorCli, BareCpuBoxIsReady) {
  Fakes fakes("scenario init-fail\n", "scenario no-device\n");
  const auto r = RunCli({"doctor", "--root", kDir + "/bare", "--nvml-lib", HEADROOM_FAKE_NVML_PATH,
                         "--python", kEnv, "--json"},
                        60000, fakes.env);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  const auto j = Report(r);
  EXPECT_EQ(j["verdict"], "ready");
  EXPECT_EQ(j["platform"]["arch"], "x86_64");
  EXPECT_EQ(j["platform"]["kind"], "none");
  EXPECT_TRUE(j["platform"]["gpu_error"].get<std::string>().starts_with("nvml: nvmlInit_v2()"));
  EXPECT_EQ(Check(j, "G1"),
            "info: torch 2.7.0+cu128 built for CUDA 12.8; no NVIDIA driver answered (" +
                j["platform"]["gpu_error"].get<std::string>() + ")");
  EXPECT_EQ(Check(j, "G4"), "info: no GPU; hottest sensor x86_pkg_temp (thermal_zone0) at 48.5 °C");
  EXPECT_TRUE(Check(j, "G5").starts_with("info: host copy ")) << Check(j, "G5");
  EXPECT_EQ(Check(j, "G6"), "pass");
  EXPECT_EQ(Check(j, "G9"), "info: bare host; torch 2.7.0+cu128");
  EXPECT_EQ(Check(j, "G10"), "info: single node: no WORLD_SIZE or NNODES, no --config given");
}

TEST(DoctorCli, ContainerBoxShowsEvidenceAndDataParallelIsFine) {
  Fakes fakes("scenario init-fail\n", "scenario no-device\n");
  auto env = fakes.env;
  env.push_back("WORLD_SIZE=2");
  env.push_back("NNODES=2");
  const auto r = RunCli(
      {"doctor", "--root", kDir + "/container", "--nvml-lib", HEADROOM_FAKE_NVML_PATH, "--python",
       kEnv, "--no-bandwidth", "--verbose", "--config", kDir + "/configs/ddp.json"},
      60000, env);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  for (const char* part :
       {"platform: aarch64; no NVIDIA GPU",
        "G9   info container: container (docker); torch 2.7.0+cu128",
        "evidence: /.dockerenv exists", "evidence: /proc/1/cgroup: 12:memory:/docker/3f2a",
        "evidence: / is an overlay filesystem", "no GPU is visible inside this container",
        "G10  pass multi-node: distributed run (WORLD_SIZE 2, NNODES 2) with no tensor parallelism",
        "G5   info bandwidth: not measured (--no-bandwidth)", "transformers 4.52.4",
        "xformers not installed", "verdict: ready (0 fail, 0 warn, 0 skip)"}) {
    EXPECT_TRUE(Contains(r.out, part)) << part << "\n" << r.out;
  }
}

TEST(DoctorCli, SlowDeviceCopyOnGb10Warns) {
  Fakes fakes("scenario gb10\n", "scenario gb10\ncopy_gbps 120\n");
  const auto r = RunCli(Args("gb10", {"--json"}), 60000, fakes.env);
  const auto j = Report(r);
  const std::string g5 = Check(j, "G5");
  EXPECT_TRUE(g5.starts_with("warn: device copy 120.0 GB/s")) << g5;
  EXPECT_TRUE(Contains(g5, "below GB10's measured 180-192 GB/s")) << g5;
}

TEST(DoctorCli, DriverOlderThanTorchFailsG1) {
  Fakes fakes("scenario discrete\ncuda_version 11080\n", "scenario discrete\n");
  const auto r = RunCli(Args("discrete", {"--no-bandwidth"}), 60000, fakes.env);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_TRUE(
      Contains(r.out, "G1   fail CUDA ABI: torch CUDA 12.8 vs driver CUDA 11.8: major mismatch"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "the driver is older than the CUDA torch was built for")) << r.out;
}

TEST(DoctorCli, TpSizeInAJsonConfigFailsOnAOneGpuBox) {
  Fakes fakes("scenario discrete\n", "scenario discrete\n");
  const auto r = RunCli(
      Args("discrete", {"--no-bandwidth", "--json", "--config", kDir + "/configs/tp_size2.json"}),
      60000, fakes.env);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  const std::string g10 = Check(Report(r), "G10");
  EXPECT_TRUE(g10.starts_with("fail: tensor parallelism 2 across machines (")) << g10;
  EXPECT_TRUE(Contains(g10, "tp_size2.json:3 tp_size = 2")) << g10;
}

TEST(DoctorCli, SameMajorNewerTorchWarns) {
  Fakes fakes("scenario discrete\ncuda_version 12040\n", "scenario discrete\n");
  const auto r = RunCli(Args("discrete", {"--no-bandwidth", "--json"}), 60000, fakes.env);
  EXPECT_EQ(Check(Report(r), "G1"),
            "warn: torch CUDA 12.8 vs driver CUDA 12.4: torch is newer than the driver");
}

TEST(DoctorCli, ArchListWithSm121aPassesG7) {
  Fakes fakes("scenario gb10\n", "scenario gb10\n");
  auto env = fakes.env;
  env.push_back("TORCH_CUDA_ARCH_LIST=12.1a");
  // A torch built with CUDA 13.0 in a copy of the environment.
  testing::TempDir py("doctor-py");
  std::filesystem::copy(kEnv, py.path(), std::filesystem::copy_options::recursive);
  testing::WriteFile(py / "lib/python3.12/site-packages/torch/version.py",
                     "__version__ = \"2.9.0+cu130\"\ncuda = \"13.0\"\nhip = None\n");
  const auto r = RunCli({"doctor", "--root", kDir + "/gb10", "--nvml-lib", HEADROOM_FAKE_NVML_PATH,
                         "--python", py.path().string(), "--no-bandwidth", "--json"},
                        60000, env);
  const auto j = Report(r);
  EXPECT_EQ(Check(j, "G7"), "pass");
  // cu130 on CUDA 13.0: G1 is no longer a mismatch, only the two registered runtimes warn.
  EXPECT_EQ(Check(j, "G1"),
            "warn: torch CUDA 13.0 vs driver CUDA 13.0; libcudart .12 and .13 all registered");
}

TEST(DoctorCli, WorkloadGivesHeadroomAndBlocksWhenItDoesNotFit) {
  Fakes fakes("scenario gb10\n", "scenario gb10\n");
  {
    const auto r = RunCli(
        Args("gb10", {"--no-bandwidth", "--json", "--workload", "qlora llama-3.1-8b seq 2048"}),
        60000, fakes.env);
    const auto j = Report(r);
    ASSERT_TRUE(j["headroom_gb"].is_number()) << r.out;
    const double expect =
        (j["workload"]["budget_bytes"].get<double>() - j["workload"]["peak_bytes"].get<double>()) /
        1e9;
    EXPECT_NEAR(j["headroom_gb"].get<double>(), expect, 0.01);
    EXPECT_GT(j["headroom_gb"].get<double>(), 0);
    EXPECT_EQ(j["workload"]["verdict"], "fits");
    EXPECT_TRUE(Contains(j["workload"]["plan"], "llama-3.1-8b qlora, batch 1, seq 2048"))
        << j["workload"]["plan"];
    // G6 now judges the vLLM server against the workload's need.
    EXPECT_TRUE(Contains(j["check_details"][5]["details"].dump(), "vllm cap 0.50"))
        << j["check_details"][5].dump();
  }
  {
    const auto r = RunCli(
        Args("gb10", {"--no-bandwidth", "--json", "--workload", "full llama-3.1-70b seq 8192"}),
        60000, fakes.env);
    EXPECT_EQ(r.status, 2) << r.err;
    const auto j = Report(r);
    EXPECT_EQ(j["workload"]["verdict"], "does not fit");
    EXPECT_LT(j["headroom_gb"].get<double>(), 0);
    EXPECT_EQ(j["verdict"], "blocked");
  }
}

// doctor's words and plan's own flags make one plan request: "bs 2" and "packing 1024"
// are --batch and --seq, and a "--" word is plan's flag as it is.
TEST(DoctorCli, WorkloadWordsAndPlanFlagsMakeOneRequest) {
  Fakes fakes("scenario gb10\n", "scenario gb10\n");
  const auto r = RunCli(Args("gb10", {"--no-bandwidth", "--json", "--workload",
                                      "llama-3.1-8b bs 2 lora packing 1024 --budget=100GB"}),
                        60000, fakes.env);
  const auto j = Report(r);
  EXPECT_TRUE(Contains(j["workload"]["plan"], "llama-3.1-8b lora, batch 2, seq 1024"))
      << j["workload"]["plan"];
  EXPECT_EQ(j["workload"]["budget_bytes"], 100'000'000'000ULL) << j["workload"].dump();
  const auto bad = RunCli(Args("gb10", {"--no-bandwidth", "--workload", "llama-3.1-8b --seq x"}),
                          30000, fakes.env);
  EXPECT_EQ(bad.status, 3);
  EXPECT_TRUE(Contains(bad.err, "headroom: doctor: --workload: --seq: ")) << bad.err;
}

TEST(DoctorCli, UsageErrorsAreOneLineWithStatusThree) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"doctor", "--config", "/nonexistent/x.yaml"},
       "headroom: doctor: --config: /nonexistent/x.yaml: no such file"},
      {{"doctor", "--python", "/nonexistent/python3"},
       "headroom: doctor: --python: /nonexistent/python3: no such"},
      {{"doctor", "--workload", "qlora seq 8192"}, "headroom: doctor: --workload: no model named"},
      {{"doctor", "--workload", "qlora llama-3.1-8b seq"},
       "headroom: doctor: --workload: 'seq' needs a number"},
      {{"doctor", "--workload", "not-a-model"}, "headroom: doctor: --workload: "},
      {{"doctor", "--report", "/nonexistent/dir/r.json"},
       "headroom: doctor: --report: /nonexistent/dir/r.json: directory"},
      {{"doctor", "--root", "/nonexistent"},
       "headroom: doctor: --root: /nonexistent has no proc/ directory"},
      {{"doctor", "--no-such-flag"}, "headroom: doctor: "},
  };
  for (const auto& c : cases) {
    const auto r = RunCli(c.args, 30000);
    EXPECT_EQ(r.status, 3) << c.args.back() << "\n" << r.out << r.err;
    EXPECT_TRUE(r.err.starts_with(c.message)) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(BandwidthCli, FakeGb10DeviceCopyIsMeasuredAndCompared) {
  Fakes fakes("scenario gb10\n", "scenario gb10\ncopy_gbps 185\n");
  const auto r = RunCli({"bandwidth", "--cuda-lib", HEADROOM_FAKE_CUDA_PATH, "--size", "16MiB",
                         "--device-size", "64MiB", "--repeats", "3", "--json"},
                        60000, fakes.env);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  const auto j = Report(r);
  ASSERT_TRUE(j.contains("host") && j.contains("device")) << r.out;
  EXPECT_EQ(j["host"]["bytes"], 16u << 20);
  EXPECT_EQ(j["host"]["seconds"].size(), 3u);
  EXPECT_GT(j["host"]["median_gbps"].get<double>(), 0);
  ASSERT_EQ(j["device"].size(), 1u);
  const auto& d = j["device"][0];
  EXPECT_EQ(d["what"], "device 0: NVIDIA GB10");
  // The fake's device clock runs at 185 GB/s and the copies are timed by its events.
  EXPECT_NEAR(d["median_gbps"].get<double>(), 185.0, 0.1);
  EXPECT_EQ(d["seconds"].size(), 3u);
  EXPECT_TRUE(Contains(d["gb10_band"], "GB10's measured 180-192 GB/s")) << d.dump();
}

TEST(BandwidthCli, DeviceOnlyWithoutADeviceFails) {
  Fakes fakes("scenario gb10\n", "scenario no-device\n");
  const auto r = RunCli({"bandwidth", "--cuda-lib", HEADROOM_FAKE_CUDA_PATH, "--device-only"},
                        30000, fakes.env);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(r.err, "headroom: bandwidth: cuda: no device\n");
  const auto missing =
      RunCli({"bandwidth", "--cuda-lib", "/nonexistent/libcuda.so.1", "--device-only"}, 30000);
  EXPECT_EQ(missing.status, 1);
  EXPECT_TRUE(
      missing.err.starts_with("headroom: bandwidth: cuda: dlopen(/nonexistent/libcuda.so.1): "))
      << missing.err;
  const auto usage = RunCli({"bandwidth", "--host-only", "--device-only"}, 30000);
  EXPECT_EQ(usage.status, 2);
  EXPECT_EQ(usage.err, "headroom: bandwidth: --host-only and --device-only exclude each other\n");
}

}  // namespace
}  // namespace headroom
