// `headroom doctor` and `headroom bandwidth` through the real binary: four fixture machines
// (tests/fixtures/doctor: GB10, discrete GPU, bare CPU, container) with the fake NVML and
// fake libcuda scenarios, a fake Python environment (torch cu128, flash-attn), configs with
// and without tensor parallelism, the report file, exit statuses and usage errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "doctor/distributed.h"
#include "run_cli.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::Contains;
using testing::RunCli;
const std::string kDir = testing::FixturePath("doctor");
const std::string kEnv = kDir + "/env";

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
           "WORLD_SIZE=", "NNODES=", "TORCH_CUDA_ARCH_LIST=", "container=", "SLURM_CONF="};
    // G11's variables too (doctor/distributed.h), unset for every run.
    for (std::string_view name : kDistributedEnvNames) env.push_back(std::string(name) + "=");
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

std::string CheckOf(const nlohmann::json& j, const std::string& id) {
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
  EXPECT_TRUE(CheckOf(j, "G1").starts_with("fail: torch CUDA 12.8 vs driver CUDA 13.0"))
      << CheckOf(j, "G1");
  EXPECT_TRUE(CheckOf(j, "G3").starts_with("warn: ")) << CheckOf(j, "G3");
  EXPECT_EQ(CheckOf(j, "G5"), "pass");
  EXPECT_TRUE(CheckOf(j, "G10").starts_with("fail: ")) << CheckOf(j, "G10");
  EXPECT_EQ(j["check_details"].size(), 11u);
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
  EXPECT_EQ(CheckOf(j, "G1"), "pass");  // 12.8 on 12.8, one runtime registered
  EXPECT_EQ(CheckOf(j, "G2"), "pass");  // flash-attn is fine on Hopper
  EXPECT_EQ(CheckOf(j, "G3"), "pass");
  EXPECT_TRUE(
      CheckOf(j, "G4").starts_with("warn: clocks held by sw_power_cap, sw_thermal_slowdown"))
      << CheckOf(j, "G4");
  EXPECT_TRUE(CheckOf(j, "G5").starts_with("info: device copy")) << CheckOf(j, "G5");
  EXPECT_EQ(CheckOf(j, "G7"), "info: compute capability 9.0");
  EXPECT_EQ(CheckOf(j, "G10"), "pass");
  // G6: the fake lists pids 1111 and 2222, which this box's proc/ does not have.
  EXPECT_TRUE(CheckOf(j, "G6").starts_with("warn: 2 processes")) << CheckOf(j, "G6");
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
  EXPECT_EQ(CheckOf(j, "G1"),
            "info: torch 2.7.0+cu128 built for CUDA 12.8; no NVIDIA driver answered (" +
                j["platform"]["gpu_error"].get<std::string>() + ")");
  EXPECT_EQ(CheckOf(j, "G4"),
            "info: no GPU; hottest sensor x86_pkg_temp (thermal_zone0) at 48.5 °C");
  EXPECT_TRUE(CheckOf(j, "G5").starts_with("info: host copy ")) << CheckOf(j, "G5");
  EXPECT_EQ(CheckOf(j, "G6"), "pass");
  EXPECT_EQ(CheckOf(j, "G9"), "info: bare host; torch 2.7.0+cu128");
  EXPECT_EQ(CheckOf(j, "G10"), "info: single node: no WORLD_SIZE or NNODES, no --config given");
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
  const std::string g5 = CheckOf(j, "G5");
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
  const std::string g10 = CheckOf(Report(r), "G10");
  EXPECT_TRUE(g10.starts_with("fail: tensor parallelism 2 across machines (")) << g10;
  EXPECT_TRUE(Contains(g10, "tp_size2.json:3 tp_size = 2")) << g10;
}

TEST(DoctorCli, SameMajorNewerTorchWarns) {
  Fakes fakes("scenario discrete\ncuda_version 12040\n", "scenario discrete\n");
  const auto r = RunCli(Args("discrete", {"--no-bandwidth", "--json"}), 60000, fakes.env);
  EXPECT_EQ(CheckOf(Report(r), "G1"),
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
  EXPECT_EQ(CheckOf(j, "G7"), "pass");
  // cu130 on CUDA 13.0: G1 is no longer a mismatch, only the two registered runtimes warn.
  EXPECT_EQ(CheckOf(j, "G1"),
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

// --workload "from FILE" (or "--from FILE"): the run's own configuration, planned as plan
// --from plans it, the workload's words over it; the keys it has that the plan does not model
// are in the workload section and in env-report.json, never dropped.
TEST(DoctorCli, WorkloadFromTheRunsConfigShowsWhatIsNotModelled) {
  Fakes fakes("scenario gb10\n", "scenario gb10\n");
  std::vector<std::string> env = fakes.env;
  env.emplace_back("HF_HUB_CACHE=/nonexistent/headroom-test-hub");  // the Hub id: the catalog
  const std::string file = testing::FixturePath("run_configs/axolotl/qwen3-32b-qlora.yaml");
  const auto r = RunCli(Args("gb10", {"--no-bandwidth", "--json", "--workload",
                                      "from " + file + " batch 2 --budget=100GB"}),
                        60000, env);
  const auto j = Report(r);
  EXPECT_TRUE(Contains(j["workload"]["plan"], "qwen3-32b qlora, batch 2, seq 2048"))
      << j["workload"]["plan"];
  EXPECT_EQ(j["workload"]["description"], "from " + file + " batch 2 --budget=100GB");
  EXPECT_EQ(j["workload"]["from"]["file"], file);
  EXPECT_EQ(j["workload"]["from"]["format"], "axolotl");
  EXPECT_EQ(j["workload"]["from"]["not_modelled"],
            nlohmann::json({"gradient_checkpointing: offload (with an adapter every activation is "
                            "offloaded: planned as --grad-ckpt off)",
                            "optimizer: adamw_torch_4bit", "lora_mlp_kernel", "lora_qkv_kernel",
                            "lora_o_kernel"}));
  const auto text =
      RunCli(Args("gb10", {"--no-bandwidth", "--workload", "--from " + file + " --budget=100GB"}),
             60000, env);
  EXPECT_TRUE(Contains(text.out, "qwen3-32b qlora, batch 1, seq 2048")) << text.out;
  EXPECT_TRUE(
      Contains(text.out, "from " + file + " (axolotl): not modelled: " +
                             "gradient_checkpointing: offload (with an adapter every activation is "
                             "offloaded: planned as --grad-ckpt off), optimizer: "
                             "adamw_torch_4bit, lora_mlp_kernel, lora_qkv_kernel, lora_o_kernel"))
      << text.out;
  // Without a file the key is there, null.
  const auto plain = Report(RunCli(
      Args("gb10", {"--no-bandwidth", "--json", "--workload", "qlora llama-3.1-8b --budget=100GB"}),
      60000, fakes.env));
  EXPECT_TRUE(plain["workload"]["from"].is_null()) << plain["workload"].dump();
  // A file that is gone: one line naming it, doctor's usage status.
  const auto gone = RunCli(
      Args("gb10", {"--no-bandwidth", "--workload", "from /nonexistent/run.yml"}), 30000, env);
  EXPECT_EQ(gone.status, 3);
  EXPECT_TRUE(Contains(gone.err, "headroom: doctor: --workload: --from: ")) << gone.err;
  EXPECT_TRUE(Contains(gone.err, "/nonexistent/run.yml")) << gone.err;
  EXPECT_EQ(std::count(gone.err.begin(), gone.err.end(), '\n'), 1) << gone.err;
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

// G11 on a copy of the bare box with a slurm.conf and a system NCCL: a two-node Slurm job
// whose tasks are not all ended when one fails warns, and the report records what
// doctor --compare lines up.
TEST(DoctorCli, G11ReadsSlurmConfAndTheSystemNccl) {
  Fakes fakes("scenario init-fail\n", "scenario no-device\n");
  testing::TempDir root("doctor-g11");
  std::filesystem::copy(kDir + "/bare", root.path(), std::filesystem::copy_options::recursive);
  testing::WriteFile(root / "etc/slurm/slurm.conf",
                     "ClusterName=sparks\nMpiDefault=none KillOnBadExit=0\n");
  testing::WriteFile(root / "usr/lib/libnccl.so.2.28.3", "");
  const std::string report = (root / "env-report.json").string();
  auto env = fakes.env;
  env.insert(env.end(), {"SLURM_JOB_ID=7", "SLURM_JOB_NUM_NODES=2", "WORLD_SIZE=2"});
  const auto r =
      RunCli({"doctor", "--root", root.path().string(), "--nvml-lib", HEADROOM_FAKE_NVML_PATH,
              "--python", kEnv, "--no-bandwidth", "--json", "--report", report},
             60000, env);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  const auto j = Report(r);
  EXPECT_EQ(CheckOf(j, "G11"), "warn: Slurm: one task's failure does not end the others");
  EXPECT_EQ(j["software"]["nccl"], "2.28.3");
  EXPECT_EQ(j["software"]["nccl_system"], "2.28.3");
  EXPECT_TRUE(j["software"]["nccl_wheel"].is_null());
  EXPECT_EQ(j["software"]["torch"], "2.7.0+cu128");
  EXPECT_EQ(j["distributed"]["slurm_conf"], "/etc/slurm/slurm.conf");
  EXPECT_EQ(j["distributed"]["kill_on_bad_exit"], 0);
  EXPECT_EQ(j["distributed"]["env"]["SLURM_JOB_NUM_NODES"], "2");

  // srun --kill-on-bad-exit for the step: no warning.
  env.push_back("SLURM_KILL_BAD_EXIT=1");
  const auto fixed = RunCli({"doctor", "--root", root.path().string(), "--nvml-lib",
                             HEADROOM_FAKE_NVML_PATH, "--python", kEnv, "--no-bandwidth", "--json"},
                            60000, env);
  EXPECT_EQ(CheckOf(Report(fixed), "G11"), "pass") << fixed.out;

  // The report of this run compares with itself: the same stack, one warning of its own.
  const auto same = RunCli({"doctor", "--compare", report, report}, 20000, fakes.env);
  EXPECT_EQ(same.status, 1) << same.out << same.err;
  EXPECT_TRUE(Contains(same.out, "F3   pass torch: 2.7.0+cu128 (CUDA 12.8) on every node"))
      << same.out;
  EXPECT_TRUE(Contains(same.out, "F4   pass NCCL: 2.28.3 on every node")) << same.out;
}

const std::string kCompare = testing::FixturePath("doctor-compare");

TEST(DoctorCli, CompareTheSameStackIsReady) {
  const auto r = RunCli(
      {"doctor", "--compare", kCompare + "/spark-1.json", kCompare + "/spark-2.json", "--json"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  const auto j = Report(r);
  EXPECT_EQ(j["verdict"], "ready");
  EXPECT_EQ(j["nodes"][1]["host"], "spark-2");
  for (const char* id : {"F1", "F2", "F3", "F4", "F5"}) EXPECT_EQ(j["checks"][id], "pass") << id;
}

TEST(DoctorCli, CompareNamesTheNodeWithAnotherNccl) {
  const auto r = RunCli({"doctor", "--compare", kCompare + "/spark-1.json",
                         kCompare + "/spark-2.json", kCompare + "/spark-3.json"});
  EXPECT_EQ(r.status, 2) << r.out << r.err;  // blocked: NCCL differs
  for (const std::string& part : std::vector<std::string>{
           "node: spark-3 (" + kCompare + "/spark-3.json)",
           "F1   warn driver: differs across nodes: 580.82.09 on spark-3; 580.95.05 on spark-1, "
           "spark-2",
           "F4   fail NCCL: differs across nodes: 2.27.7 on spark-3; 2.28.3 on spark-1, spark-2",
           "a pip NCCL wheel on spark-3; the system's library on spark-1, spark-2",
           "F5   warn nodes: warnings on spark-3",
           "spark-3: G11 warn: torch loads the wheel's NCCL 2.27.7, not the system's 2.28.3",
           "verdict: blocked (1 fail, 2 warn, 0 skip)"}) {
    EXPECT_TRUE(Contains(r.out, part)) << part << "\n" << r.out;
  }
}

TEST(DoctorCli, CompareAnOlderReportSkipsWhatItLacks) {
  const auto r =
      RunCli({"doctor", "--compare", kCompare + "/spark-1.json", kCompare + "/old-node.json"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "F3   skip torch: unknown on old-node")) << r.out;
  EXPECT_TRUE(Contains(r.out, "F1   pass driver: 580.95.05 on every node")) << r.out;
}

TEST(DoctorCli, CompareUsageErrors) {
  auto r = RunCli({"doctor", "--compare", kCompare + "/spark-1.json"});
  EXPECT_EQ(r.status, 3) << r.err;
  r = RunCli({"doctor", "--compare", kCompare + "/spark-1.json", kCompare + "/spark-2.json",
              "--workload", "qlora llama-3.1-8b"});
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_TRUE(Contains(r.err, "--compare reads reports")) << r.err;
  r = RunCli({"doctor", "--compare", kCompare + "/spark-1.json", kCompare + "/missing.json"});
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_TRUE(Contains(r.err, "--compare: open(" + kCompare + "/missing.json)")) << r.err;
}

}  // namespace
}  // namespace headroom
