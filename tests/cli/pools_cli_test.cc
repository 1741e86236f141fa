// The right pool on every platform (docs/plan.md "Pools", docs/doctor.md G3): plan and doctor
// through the real binary with the fake NVML (tests/fakes/fake_nvml.cc) as a discrete GPU,
// and plan --target for machines that are not this one.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "doctor/distributed.h"
#include "run_cli.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::Contains;
using testing::RunCli;

const std::string kPoolsIdle = testing::kFixtures + "gb10-idle";  // MemAvailable 115 GiB

// A machine with little host memory: MemAvailable 19.9 GB (the box the issue was seen on).
struct PoolsSmallHost {
  testing::TempDir dir{"pools-host"};
  PoolsSmallHost() {
    testing::WriteFile(dir / "proc/meminfo",
                       "MemTotal:       24576000 kB\nMemFree:        18000000 kB\n"
                       "MemAvailable:   19433594 kB\nBuffers:          100000 kB\n"
                       "Cached:          1500000 kB\n");
  }
  std::string root() const { return dir.path().string(); }
};

// A fake NVML script and the environment naming it.
struct PoolsFakeGpu {
  testing::TempDir dir{"pools-nvml"};
  std::vector<std::string> env;
  explicit PoolsFakeGpu(const std::string& script) {
    testing::WriteFile(dir / "nvml", script);
    env = {"HEADROOM_FAKE_NVML_SCRIPT=" + (dir / "nvml").string()};
  }
};

// An RTX 4090: 24 GB of its own memory, nearly all free.
const char* const kPoolsRtx4090 =
    "scenario discrete\nname NVIDIA GeForce RTX 4090\nmemory_total_mib 24564\n"
    "memory_used_mib 400\n";

std::vector<std::string> PoolsPlanArgs(const std::string& root, std::vector<std::string> extra) {
  std::vector<std::string> a = {"plan",   "llama-3.1-8b", "--method",   "lora",
                                "--root", root,           "--nvml-lib", HEADROOM_FAKE_NVML_PATH};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

nlohmann::json PoolsJson(const testing::CliResult& r) {
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_TRUE(j.is_object()) << r.out << r.err;
  return j;
}

const nlohmann::json& PoolOf(const nlohmann::json& j, const std::string& name) {
  static const nlohmann::json none;
  for (const auto& p : j["pools"]) {
    if (p["pool"] == name) return p;
  }
  ADD_FAILURE() << "no pool " << name << " in " << j["pools"].dump();
  return none;
}

// An H200 (the fake's default: 141 GB, 80 GiB of it in use) on a box with 19.9 GB of host
// memory: the device holds the 8B LoRA, the host holds the host process. Before, plan said
// "platform unified" and "does not fit" against the host alone.
TEST(PoolsCli, H200IsDiscreteAndTheDeviceHoldsTheRun) {
  PoolsSmallHost host;
  PoolsFakeGpu gpu("scenario discrete\n");
  const auto text = RunCli(PoolsPlanArgs(host.root(), {}), 20000, gpu.env);
  EXPECT_EQ(text.status, 0) << text.out << text.err;
  EXPECT_TRUE(Contains(text.out, "platform discrete")) << text.out;
  EXPECT_TRUE(Contains(text.out, "verdict: fits (the worse of the device's and the host's)"))
      << text.out;
  EXPECT_TRUE(Contains(text.out, "  device: fits: ")) << text.out;
  EXPECT_TRUE(Contains(text.out, "NVML free memory of device 0, NVIDIA H200")) << text.out;
  EXPECT_TRUE(Contains(text.out, "  host: fits: ")) << text.out;
  EXPECT_FALSE(Contains(text.out, "does not fit")) << text.out;

  const auto j = PoolsJson(RunCli(PoolsPlanArgs(host.root(), {"--json"}), 20000, gpu.env));
  EXPECT_EQ(j["platform"], "discrete");
  EXPECT_EQ(j["verdict"], "fits");
  EXPECT_EQ(j["device"]["name"], "NVIDIA H200");
  EXPECT_EQ(j["device"]["total_bytes"], 150'754'820'096ULL);
  // Free: the total less 80 GiB used and 512 MiB reserved.
  EXPECT_EQ(j["device"]["budget_bytes"], 150'754'820'096ULL - (80ULL << 30) - (512ULL << 20));
  const auto& device = PoolOf(j, "device");
  EXPECT_EQ(device["verdict"], "fits");
  EXPECT_EQ(device["need_bytes"], j["peak_bytes"]);
  EXPECT_EQ(device["budget_bytes"], j["device"]["budget_bytes"]);
  const auto& host_pool = PoolOf(j, "host");
  EXPECT_EQ(host_pool["verdict"], "fits");
  EXPECT_EQ(host_pool["need_bytes"], j["host_peak_bytes"]);
  EXPECT_EQ(host_pool["budget_bytes"], j["budget_bytes"]);
}

// --platform unified keeps the one host pool whatever NVML reports: the user's word wins.
TEST(PoolsCli, PlatformUnifiedOverridesTheDetectedDevice) {
  PoolsSmallHost host;
  PoolsFakeGpu gpu("scenario discrete\n");
  const auto r =
      RunCli(PoolsPlanArgs(host.root(), {"--platform", "unified", "--json"}), 20000, gpu.env);
  EXPECT_EQ(r.status, 1) << r.err;
  const auto j = PoolsJson(r);
  EXPECT_EQ(j["platform"], "unified");
  ASSERT_EQ(j["pools"].size(), 1u);
  EXPECT_EQ(PoolOf(j, "host")["verdict"], "does_not_fit");
  EXPECT_EQ(PoolOf(j, "host")["need_bytes"], j["peak_bytes"]);
}

// An RTX 4090 (24 GB) in a box with 115 GiB free: batch 4 at 4096 fits the host many times
// over and the device not at all. Before, plan said "fits" against the host.
TEST(PoolsCli, Rtx4090RunThatFitsTheHostButNotTheDeviceDoesNotFit) {
  PoolsFakeGpu gpu(kPoolsRtx4090);
  const std::vector<std::string> run = {"--batch", "4", "--seq", "4096"};
  const auto text = RunCli(PoolsPlanArgs(kPoolsIdle, run), 20000, gpu.env);
  EXPECT_EQ(text.status, 1) << text.out << text.err;
  EXPECT_TRUE(
      Contains(text.out, "verdict: does not fit (the worse of the device's and the host's)"))
      << text.out;
  EXPECT_TRUE(Contains(text.out, "  device: does not fit: ")) << text.out;
  EXPECT_TRUE(Contains(text.out, "NVIDIA GeForce RTX 4090")) << text.out;
  EXPECT_TRUE(Contains(text.out, "  host: fits: ")) << text.out;

  auto args = PoolsPlanArgs(kPoolsIdle, run);
  args.push_back("--json");
  const auto j = PoolsJson(RunCli(args, 20000, gpu.env));
  EXPECT_EQ(j["verdict"], "does_not_fit");
  EXPECT_EQ(PoolOf(j, "device")["verdict"], "does_not_fit");
  EXPECT_EQ(PoolOf(j, "host")["verdict"], "fits");
  EXPECT_GT(j["peak_bytes"].get<uint64_t>(), 24564ULL << 20);
  // The advice aims at the device: every step it proposes fits under its 90 % line.
  ASSERT_FALSE(j["advice"].empty());
  for (const auto& a : j["advice"]) {
    if (a["step"] == "batch" || a["step"] == "seq") {
      EXPECT_LE(a["peak_bytes"].get<double>(), 0.9 * j["device"]["budget_bytes"].get<double>())
          << a.dump();
    }
  }
}

// --platform discrete where no device reports its memory: the device is not judged, and the
// line says how to give its size.
TEST(PoolsCli, DiscreteWithoutADeviceSizeSaysSo) {
  const auto r = RunCli(
      {"plan", "llama-3.1-8b", "--method", "lora", "--platform", "discrete", "--root", kPoolsIdle});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "  device: not judged: needs ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "give --target discrete:SIZE or a card name")) << r.out;
  EXPECT_TRUE(Contains(r.out, "  host: fits: ")) << r.out;
}

// --target gb10 on a small box: a Spark's figures from the profile, said to be so.
TEST(PoolsCli, TargetGb10PlansAgainstTheSparkProfile) {
  PoolsSmallHost host;
  const std::vector<std::string> base = {"plan", "llama-3.1-8b", "--method",
                                         "lora", "--root",       host.root()};
  const auto here = RunCli(base);
  EXPECT_EQ(here.status, 1) << here.out;  // 19.9 GB here is too small
  auto args = base;
  args.insert(args.end(), {"--target", "gb10"});
  const auto r = RunCli(args);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out,
                       "target gb10: MemTotal 130.66 GB (121.69 GiB), idle MemAvailable "
                       "123.47 GB (114.99 GiB) (platform profile, not measured here)"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "platform unified")) << r.out;
  EXPECT_TRUE(Contains(r.out, "verdict: fits")) << r.out;
  args.push_back("--json");
  const auto j = PoolsJson(RunCli(args));
  EXPECT_EQ(j["target"], "gb10");
  EXPECT_EQ(j["budget"]["mem_total_bytes"], 127'600'748ULL * 1024);
  EXPECT_EQ(j["budget"]["mem_available_bytes"], 120'574'075ULL * 1024);
  // The default reserve and a Spark's kill level (8 % of its MemTotal): judged as on a Spark.
  EXPECT_EQ(j["budget_bytes"],
            120'574'075ULL * 1024 - (4ULL << 30) - 127'600'748ULL * 1024 * 8 / 100);
}

// --target discrete:SIZE and a card name: the device pool is the whole card; the target's
// host is judged only against a --budget given for it.
TEST(PoolsCli, TargetDiscreteSizeAndCardNames) {
  auto plan = [](std::vector<std::string> extra) {
    std::vector<std::string> a = {"plan",   "llama-3.1-8b", "--method", "lora",
                                  "--root", kPoolsIdle,     "--json"};
    a.insert(a.end(), extra.begin(), extra.end());
    return RunCli(a);
  };
  const auto sized = plan({"--target", "discrete:80GiB"});
  EXPECT_EQ(sized.status, 0) << sized.err;
  const auto j = PoolsJson(sized);
  EXPECT_EQ(j["platform"], "discrete");
  EXPECT_EQ(j["device"]["budget_bytes"], 80ULL << 30);
  EXPECT_EQ(j["device"]["measured"], false);
  EXPECT_EQ(PoolOf(j, "device")["verdict"], "fits");
  EXPECT_TRUE(PoolOf(j, "host")["verdict"].is_null());
  EXPECT_TRUE(PoolOf(j, "host")["budget_bytes"].is_null());

  const auto h100 = PoolsJson(plan({"--target", "H100", "--budget", "64GiB"}));
  EXPECT_EQ(h100["device"]["budget_bytes"], 80'000'000'000ULL);
  EXPECT_EQ(h100["device"]["name"], "H100 80GB");
  EXPECT_EQ(PoolOf(h100, "host")["verdict"], "fits");
  EXPECT_EQ(PoolOf(h100, "host")["budget_bytes"], 64ULL << 30);

  const auto rtx = plan({"--target", "rtx-4090", "--batch", "4", "--seq", "4096"});
  EXPECT_EQ(rtx.status, 1) << rtx.out;
  EXPECT_EQ(PoolsJson(rtx)["device"]["budget_bytes"], 24'000'000'000ULL);
  const auto rtx_text = RunCli({"plan", "llama-3.1-8b", "--method", "lora", "--root", kPoolsIdle,
                                "--target", "RTX 4090", "--batch", "4", "--seq", "4096"});
  EXPECT_EQ(rtx_text.status, 1);
  EXPECT_TRUE(Contains(rtx_text.out, "  device: does not fit: ")) << rtx_text.out;
  EXPECT_TRUE(Contains(rtx_text.out,
                       "--target GeForce RTX 4090 24GB: the whole card, not measured "
                       "here"))
      << rtx_text.out;
  EXPECT_TRUE(Contains(rtx_text.out, "  host: not judged: needs ")) << rtx_text.out;
}

TEST(PoolsCli, BadTargetIsOneUsageLine) {
  for (const std::string target : {"tpu", "discrete:", "discrete:lots", "discrete:0"}) {
    const auto r = RunCli(
        {"plan", "llama-3.1-8b", "--method", "lora", "--root", kPoolsIdle, "--target", target});
    EXPECT_EQ(r.status, 2) << target << ": " << r.out;
    EXPECT_TRUE(Contains(r.err, "plan: --target: '" + target +
                                    "' is not gb10, discrete:SIZE (e.g. discrete:80GiB) or a "
                                    "known card (h100, h100-nvl, h200,"))
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  // A library the user names must load: its error, not a silent plan without a GPU.
  const auto no_lib = RunCli({"plan", "llama-3.1-8b", "--root", kPoolsIdle, "--nvml-lib",
                              "/nonexistent/libnvidia-ml.so.1"});
  EXPECT_EQ(no_lib.status, 2);
  EXPECT_TRUE(Contains(no_lib.err, "plan: --nvml-lib: nvml:")) << no_lib.err;
  const auto conflict = RunCli(
      {"plan", "llama-3.1-8b", "--root", kPoolsIdle, "--target", "gb10", "--platform", "discrete"});
  EXPECT_EQ(conflict.status, 2);
  EXPECT_TRUE(Contains(conflict.err,
                       "conflicting flags: --target gb10 is a unified machine; --platform says "
                       "discrete"))
      << conflict.err;
}

// doctor G3 on a discrete GPU judges the device's free memory from NVML and names it.
struct PoolsDoctorFakes {
  testing::TempDir dir{"pools-doctor"};
  std::vector<std::string> env;
  explicit PoolsDoctorFakes(const std::string& nvml_script) {
    testing::WriteFile(dir / "nvml", nvml_script);
    testing::WriteFile(dir / "cuda", "scenario discrete\n");
    env = {"HEADROOM_FAKE_NVML_SCRIPT=" + (dir / "nvml").string(),
           "HEADROOM_FAKE_CUDA_SCRIPT=" + (dir / "cuda").string(),
           "WORLD_SIZE=",
           "NNODES=",
           "TORCH_CUDA_ARCH_LIST=",
           "container=",
           "SLURM_CONF="};
    for (std::string_view name : kDistributedEnvNames) env.push_back(std::string(name) + "=");
  }
};

testing::CliResult PoolsDoctor(const PoolsDoctorFakes& fakes, bool json) {
  const std::string dir = testing::FixturePath("doctor");
  std::vector<std::string> a = {"doctor",
                                "--root",
                                dir + "/discrete",
                                "--nvml-lib",
                                HEADROOM_FAKE_NVML_PATH,
                                "--cuda-lib",
                                HEADROOM_FAKE_CUDA_PATH,
                                "--python",
                                dir + "/env",
                                "--no-bandwidth"};
  if (json) a.push_back("--json");
  return RunCli(a, 60000, fakes.env);
}

TEST(PoolsCli, DoctorG3JudgesTheDiscreteDevice) {
  PoolsDoctorFakes h200("scenario discrete\n");
  const auto text = PoolsDoctor(h200, false);
  EXPECT_TRUE(Contains(text.out,
                       "G3   pass device memory headroom: NVIDIA H200: 59.90 GiB free of "
                       "140.40 GiB"))
      << text.out;
  EXPECT_FALSE(Contains(text.out, "UMA headroom")) << text.out;
  const auto h200_json = nlohmann::json::parse(PoolsDoctor(h200, true).out, nullptr, false);
  ASSERT_TRUE(h200_json.is_object());
  EXPECT_EQ(h200_json["checks"]["G3"], "pass");
  std::string g3_details;
  for (const auto& c : h200_json["check_details"]) {
    if (c["id"] == "G3") g3_details = c.dump();
  }
  EXPECT_TRUE(Contains(g3_details, "device memory headroom")) << g3_details;
  EXPECT_TRUE(Contains(g3_details, "host: MemAvailable")) << g3_details;

  // A device that other processes fill: 23.6 of 24 GiB in use.
  PoolsDoctorFakes full(
      "scenario discrete\nname NVIDIA GeForce RTX 4090\nmemory_total_mib 24564\n"
      "memory_used_mib 23600\n");
  const auto j = nlohmann::json::parse(PoolsDoctor(full, true).out, nullptr, false);
  ASSERT_TRUE(j.is_object());
  const std::string g3 = j["checks"]["G3"].get<std::string>();
  EXPECT_TRUE(g3.starts_with("warn: NVIDIA GeForce RTX 4090: 0.44 GiB free of 23.99 GiB")) << g3;
}

}  // namespace
}  // namespace headroom
