// `headroom ps` through the real binary: the fixture tree with the fake NVML, a copy of part
// of it for the "fits" answer, real processes with faked command lines and environments
// (listed with their caps and never signalled), and usage errors.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "run_cli.h"
#include "sys/processes.h"
#include "testing_files.h"
#include "testing_processes.h"

namespace headroom {
namespace {

using testing::Alive;
using testing::Contains;
using testing::RunCli;
const std::string kBox = testing::FixturePath("ps-box");

// The fake NVML's discrete scenario lists pids 1111 (40 GiB) and 2222 (no figure), which
// the fixture tree has.
struct FakeNvmlScript {
  testing::TempDir dir{"ps-nvml"};
  std::string env;
  FakeNvmlScript() {
    testing::WriteFile(dir / "script", "scenario discrete\n");
    env = "HEADROOM_FAKE_NVML_SCRIPT=" + (dir / "script").string();
  }
};

TEST(PsCli, FixtureTreeTableWithCapsSettingsAndGpuMemory) {
  FakeNvmlScript script;
  const auto r =
      RunCli({"ps", "--root", kBox, "--nvml-lib", HEADROOM_FAKE_NVML_PATH}, 20000, {script.env});
  EXPECT_EQ(r.status, 0) << r.err;
  for (const char* part : {"1111", "alice", "0.50 (--gpu-memory-utilization)", "40.00 GiB",
                           "1.50 GiB", "(of pid 1111)", "python (torch loaded)", "ollama",
                           "llama.cpp", "fixed at load", "OLLAMA_MAX_LOADED_MODELS=2 (environ)",
                           "OLLAMA_NUM_PARALLEL=4 (environ)", "--ctx-size=8192 (argv)", "--no-mmap",
                           "not a hard cap on unified memory", "environment not readable"}) {
    EXPECT_TRUE(Contains(r.out, part)) << part << "\n" << r.out;
  }
  // Secrets from argv and environ never shown; unrelated processes not listed.
  for (const char* part : {"sk-not-a-real-key", "hf_not_a_real_token", "5555", "tail -f", "6666"}) {
    EXPECT_FALSE(Contains(r.out, part)) << part << "\n" << r.out;
  }
}

TEST(PsCli, NeedGivesAdviceWithArithmeticAndExitOne) {
  FakeNvmlScript script;
  const auto r =
      RunCli({"ps", "--root", kBox, "--nvml-lib", HEADROOM_FAKE_NVML_PATH, "--need", "4GiB"}, 20000,
             {script.env});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  // MemTotal 127600748 kB = 121.69 GiB; reserve 8% = 9.74 GiB; llama.cpp (5 GiB, CPU only)
  // is kept first, then vLLM at 0.50.
  for (const char* part :
       {"pid 4444: llama.cpp holds 5.00 GiB (fixed after load) + need 4.00 GiB = 9.00 GiB of "
        "111.95 GiB "
        "(MemTotal 121.69 GiB - reserve 9.74 GiB): keep",
        "pid 1111: vllm cap 0.50 x 121.69 GiB = 60.84 GiB + 5.00 GiB kept + need 4.00 GiB = 69.84 "
        "GiB of",
        "pid 2222: python (torch loaded) holds 6.00 GiB and has no cap", "kill -TERM 2222",
        "systemctl stop ollama", "2 holder(s) to stop before this run"}) {
    EXPECT_TRUE(Contains(r.out, part)) << part << "\n" << r.out;
  }
  EXPECT_FALSE(Contains(r.out, "pid 1112: part of")) << r.out;  // workers are not advised on
}

TEST(PsCli, JsonSchemaBytesAsIntegers) {
  FakeNvmlScript script;
  const auto r = RunCli(
      {"ps", "--root", kBox, "--nvml-lib", HEADROOM_FAKE_NVML_PATH, "--json", "--need", "4GiB"},
      20000, {script.env});
  EXPECT_EQ(r.status, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["mem_total_bytes"], 127600748ULL * 1024);
  EXPECT_EQ(j["gpu"]["nvml"], true);
  EXPECT_EQ(j["need"]["fits"], false);
  EXPECT_EQ(j["need"]["need_bytes"], 4ULL << 30);
  ASSERT_EQ(j["processes"].size(), 5u);
  const auto& vllm = j["processes"][0];
  EXPECT_EQ(vllm["pid"], 1111);
  EXPECT_EQ(vllm["kind"], "vllm");
  EXPECT_EQ(vllm["gpu_bytes"], 40ULL << 30);
  EXPECT_EQ(vllm["pss_bytes"], 1536ULL << 20);
  EXPECT_EQ(vllm["cap"]["fraction"], 0.5);
  EXPECT_TRUE(Contains(vllm["command"].get<std::string>(), "--api-key ***")) << vllm["command"];
  EXPECT_EQ(vllm["advice"]["action"], "keep");
  EXPECT_EQ(vllm["advice"]["stop_command"], nullptr);
  EXPECT_EQ(j["processes"][1]["part_of"], 1111);
  EXPECT_EQ(j["processes"][1]["advice"]["action"], "part-of");
  EXPECT_EQ(j["processes"][2]["gpu_bytes"], nullptr);  // NVML gave no figure
  EXPECT_EQ(j["processes"][2]["advice"]["stop_command"], "kill -TERM 2222");
  EXPECT_EQ(j["processes"][3]["advice"]["stop_command"], "systemctl stop ollama");
  EXPECT_FALSE(Contains(r.out, "hf_not_a_real_token"));
}

TEST(PsCli, FitsBesideACappedServerExitsZero) {
  testing::TempDir root("ps-fits");
  namespace fs = std::filesystem;
  fs::create_directories(root / "proc");
  fs::copy(kBox + "/proc/meminfo", root / "proc/meminfo");
  for (const char* pid : {"1111", "1112"}) fs::copy(kBox + "/proc/" + pid, root / "proc" / pid);
  const std::string missing = "--nvml-lib=" + (root / "no-such-libnvidia-ml.so").string();
  auto r = RunCli({"ps", "--root", root.path().string(), missing, "--need", "4GiB"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "fits beside everything kept")) << r.out;
  EXPECT_TRUE(Contains(r.err, "dlopen")) << r.err;  // a library asked for by name says why not
  EXPECT_TRUE(Contains(r.out, "gpu: nvml: dlopen")) << r.out;
  // 60.84 GiB reserved by vLLM + 60 GiB > 111.95 GiB: vLLM must stop first.
  r = RunCli({"ps", "--root", root.path().string(), missing, "--need", "60GiB"});
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_TRUE(Contains(r.out, "> 111.95 GiB")) << r.out;
  EXPECT_TRUE(Contains(r.out, "kill -TERM 1111")) << r.out;
}

// A child that runs `script` under bash with `env` added; the test kills it.
pid_t StartFake(const std::string& script, const char* env_entry) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (env_entry) putenv(const_cast<char*>(env_entry));
    execl("/bin/bash", "bash", "-c", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

bool WaitForCmdline(pid_t pid, const std::string& part) {
  for (int i = 0; i < 200; ++i) {
    auto cmd = SysRoot("/").ReadFile("proc/" + std::to_string(pid) + "/cmdline");
    if (cmd && cmd->find(part) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(PsCli, RealProcessesListedWithCapsAndNeverSignalled) {
  const pid_t vllm =
      StartFake("exec -a 'vllm serve m --gpu-memory-utilization 0.9' sleep 30", nullptr);
  const pid_t ollama = StartFake("exec -a ollama sleep 30", "OLLAMA_NUM_PARALLEL=4");
  struct Reap {
    pid_t pid;
    ~Reap() {
      if (pid <= 0) return;  // fork failed: kill(-1) would signal every process
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  } reap_vllm{vllm}, reap_ollama{ollama};
  ASSERT_GT(vllm, 0);
  ASSERT_GT(ollama, 0);
  ASSERT_TRUE(WaitForCmdline(vllm, "vllm serve"));
  ASSERT_TRUE(WaitForCmdline(ollama, "ollama"));

  const auto r = RunCli({"ps", "--json", "--need", "1GiB"});
  EXPECT_EQ(r.status, 1) << r.err;  // a vLLM at 0.90 of the pool must stop first
  const auto j = nlohmann::json::parse(r.out);
  bool saw_vllm = false, saw_ollama = false;
  for (const auto& p : j["processes"]) {
    if (p["pid"] == vllm) {
      saw_vllm = true;
      EXPECT_EQ(p["kind"], "vllm");
      EXPECT_EQ(p["cap"]["fraction"], 0.9);
      EXPECT_EQ(p["cap"]["source"], "--gpu-memory-utilization");
      EXPECT_EQ(p["advice"]["action"], "stop");
      EXPECT_EQ(p["advice"]["stop_command"], "kill -TERM " + std::to_string(vllm));
    }
    if (p["pid"] == ollama) {
      saw_ollama = true;
      EXPECT_EQ(p["kind"], "ollama");
      ASSERT_EQ(p["settings"].size(), 1u) << p.dump();
      EXPECT_EQ(p["settings"][0]["name"], "OLLAMA_NUM_PARALLEL");
      EXPECT_EQ(p["settings"][0]["value"], "4");
    }
  }
  EXPECT_TRUE(saw_vllm) << r.out;
  EXPECT_TRUE(saw_ollama) << r.out;
  // The table lists them too, and nothing was signalled.
  const auto t = RunCli({"ps"});
  EXPECT_EQ(t.status, 0) << t.err;
  EXPECT_TRUE(Contains(t.out, std::to_string(vllm))) << t.out;
  EXPECT_TRUE(Contains(t.out, "0.90 (--gpu-memory-utilization)")) << t.out;
  EXPECT_TRUE(Alive(vllm));
  EXPECT_TRUE(Alive(ollama));
}

TEST(PsCli, UsageErrorsNameTheFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const std::vector<Case> cases = {
      {{"ps", "--root", kBox, "--need", "lots"}, "headroom: ps: --need"},
      {{"ps", "--root", kBox, "--need", "150%"}, "--need: '150%' is not a percentage"},
      {{"ps", "--root", "/nonexistent/headroom-root"},
       "--root: /nonexistent/headroom-root has no proc/"},
      {{"ps", "--bogus"}, "--bogus"},
  };
  for (const auto& c : cases) {
    const auto r = RunCli(c.args);
    EXPECT_EQ(r.status, 2) << c.args.back();
    EXPECT_TRUE(Contains(r.err, c.err)) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  testing::TempDir bare("ps-bare");
  std::filesystem::create_directories(bare / "proc");
  const auto m = RunCli({"ps", "--root", bare.path().string(), "--need", "1G"});
  EXPECT_EQ(m.status, 2);
  EXPECT_TRUE(Contains(m.err, "--need: MemTotal unknown")) << m.err;
  const auto h = RunCli({"ps", "--help"});
  EXPECT_EQ(h.status, 0);
  EXPECT_TRUE(Contains(h.out, "exit status"));
}

}  // namespace
}  // namespace headroom
