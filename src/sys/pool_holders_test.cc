#include "sys/pool_holders.h"

#include <gtest/gtest.h>

#include <string>

#include "testing_files.h"

namespace headroom {
namespace {

std::optional<HolderKind> Classify(std::vector<std::string> argv, bool* python = nullptr) {
  return ClassifyCommand(argv, python);
}

TEST(ClassifyCommand, KnownProgramsAndModules) {
  struct Case {
    std::vector<std::string> argv;
    std::optional<HolderKind> kind;
  };
  const std::vector<Case> cases = {
      {{"vllm", "serve", "m"}, HolderKind::kVllm},
      {{"/venv/bin/python3.12", "/venv/bin/vllm", "serve", "m"}, HolderKind::kVllm},
      {{"python3", "-m", "vllm.entrypoints.openai.api_server"}, HolderKind::kVllm},
      {{"VLLM::EngineCore"}, HolderKind::kVllm},
      {{"python", "-u", "-m", "sglang.launch_server", "--model", "x"}, HolderKind::kSglang},
      {{"sglang::scheduler_TP0"}, HolderKind::kSglang},
      {{"/usr/local/bin/ollama", "serve"}, HolderKind::kOllama},
      {{"/usr/lib/ollama/runners/cuda_v12/ollama_llama_server", "--model", "x"},
       HolderKind::kOllama},
      {{"./build/bin/llama-server", "-m", "x.gguf"}, HolderKind::kLlamaCpp},
      {{"text-generation-launcher", "--model-id", "x"}, HolderKind::kTgi},
      {{"trtllm-serve", "x"}, HolderKind::kTensorRtLlm},
      {{"trl", "sft", "--model_name_or_path", "x"}, HolderKind::kTrl},
      {{"axolotl", "train", "cfg.yml"}, HolderKind::kAxolotl},
      {{"python", "-m", "axolotl.cli.train", "cfg.yml"}, HolderKind::kAxolotl},
      {{"torchrun", "--nproc-per-node", "1", "train.py"}, HolderKind::kTorchrun},
      {{"python", "-m", "torch.distributed.run", "train.py"}, HolderKind::kTorchrun},
      {{"accelerate", "launch", "train.py"}, HolderKind::kAccelerate},
      {{"deepspeed", "train.py"}, HolderKind::kDeepspeed},
      {{"ray::RayWorkerWrapper.execute_method"}, HolderKind::kRayWorker},
      // Launchers pass the walk on.
      {{"nohup", "env", "CUDA_VISIBLE_DEVICES=0", "vllm", "serve", "m"}, HolderKind::kVllm},
      {{"conda", "run", "-n", "serve", "vllm", "serve"}, HolderKind::kVllm},
      {{"taskset", "-c", "0-3", "llama-server", "-m", "x"}, HolderKind::kLlamaCpp},
      // `exec -a "vllm serve m --gpu-memory-utilization 0.9" sleep 30`: one argument.
      {{"vllm serve m --gpu-memory-utilization 0.9", "30"}, HolderKind::kVllm},
      // A word in an argument is not the program.
      {{"tail", "-f", "/var/log/vllm.log"}, std::nullopt},
      {{"vim", "ollama.md"}, std::nullopt},
      {{"grep", "-r", "vllm", "."}, std::nullopt},
      {{"sudo", "tail", "vllm"}, std::nullopt},
      {{"python3", "-c", "import vllm"}, std::nullopt},
      {{"python3", "train.py"}, std::nullopt},  // needs maps
      {{}, std::nullopt},
      {{""}, std::nullopt},
  };
  for (const auto& c : cases) {
    std::string shown;
    for (const auto& a : c.argv) shown += "[" + a + "]";
    EXPECT_EQ(Classify(c.argv), c.kind) << shown;
  }
}

TEST(ClassifyCommand, SaysWhenItIsPython) {
  bool python = false;
  EXPECT_FALSE(Classify({"/usr/bin/python3.12", "train.py"}, &python));
  EXPECT_TRUE(python);
  EXPECT_FALSE(Classify({"pythonista", "x"}, &python));
  EXPECT_FALSE(python);
  EXPECT_FALSE(Classify({"bash", "-c", "python3 x.py"}, &python));
  EXPECT_FALSE(python);
}

TEST(CommandWords, SplitsSetproctitleArguments) {
  EXPECT_EQ(CommandWords({"vllm serve  m\t--x=1", "30"}),
            (std::vector<std::string>{"vllm", "serve", "m", "--x=1", "30"}));
  EXPECT_EQ(CommandWords({"", "a"}), (std::vector<std::string>{"", "a"}));
}

TEST(StopCommand, ServiceUserServiceContainerOrKill) {
  PoolHolder h;
  h.facts.pid = 3333;
  EXPECT_EQ(StopCommand(h), "kill -TERM 3333");
  h.facts.cgroup = "/system.slice/ollama.service";
  EXPECT_EQ(StopCommand(h), "systemctl stop ollama");
  h.facts.cgroup = "/user.slice/user-1000.slice/user@1000.service/app.slice/vllm.service";
  EXPECT_EQ(StopCommand(h), "systemctl --user stop vllm");
  h.facts.cgroup = "/user.slice/user-1000.slice/user@1000.service";
  EXPECT_EQ(StopCommand(h), "kill -TERM 3333");
  h.facts.cgroup =
      "/system.slice/docker-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope";
  EXPECT_EQ(StopCommand(h), "docker stop 0123456789ab");
  h.facts.cgroup = "/user.slice/user-1000.slice/session-2.scope";
  EXPECT_EQ(StopCommand(h), "kill -TERM 3333");
  h.in_proc = false;
  EXPECT_EQ(StopCommand(h), "");
}

TEST(DisplayCommand, MasksSecretsAndControlBytes) {
  ProcessFacts f;
  f.argv = {"vllm", "serve", "--api-key", "sk-123", "--hf-token=hf_x", "a b", "x\ny"};
  EXPECT_EQ(DisplayCommand(f), "vllm serve --api-key *** --hf-token=*** 'a b' x?y");
  f.argv.clear();
  f.comm = "kworker/0:1";
  EXPECT_EQ(DisplayCommand(f), "[kworker/0:1]");
}

TEST(FindPoolHolders, FixtureTreeWithNvmlList) {
  const SysRoot root(testing::FixturePath("ps-box"));
  // As the fake NVML's discrete scenario lists them, plus a pid in another namespace.
  const std::vector<GpuProcess> gpu = {
      {1111, 40ULL << 30}, {2222, std::nullopt}, {9999, 1ULL << 30}};
  const auto holders = FindPoolHolders(root, gpu, 0);
  std::vector<pid_t> pids;
  for (const auto& h : holders) pids.push_back(h.facts.pid);
  EXPECT_EQ(pids, (std::vector<pid_t>{1111, 1112, 2222, 3333, 4444, 9999}));  // not 5555, 6666
  ASSERT_EQ(holders.size(), 6u);
  EXPECT_EQ(holders[0].kind, HolderKind::kVllm);
  EXPECT_EQ(holders[0].user, "alice");
  EXPECT_EQ(holders[0].gpu_bytes, 40ULL << 30);
  EXPECT_EQ(holders[0].facts.pss_bytes, 1536ULL << 20);
  EXPECT_FALSE(holders[0].part_of);
  EXPECT_EQ(holders[1].kind, HolderKind::kVllm);  // VLLM::EngineCore
  EXPECT_EQ(holders[1].part_of, 1111);
  EXPECT_EQ(holders[2].kind, HolderKind::kPythonTorch);
  EXPECT_TRUE(holders[2].in_gpu_list);
  EXPECT_FALSE(holders[2].gpu_bytes);  // NVML gave no figure: unknown, not 0
  EXPECT_EQ(holders[3].kind, HolderKind::kOllama);
  EXPECT_EQ(holders[3].user, "ollama");
  EXPECT_EQ(StopCommand(holders[3]), "systemctl stop ollama");
  EXPECT_EQ(holders[4].kind, HolderKind::kLlamaCpp);
  EXPECT_FALSE(holders[4].facts.pss_bytes);  // no smaps_rollup
  EXPECT_EQ(holders[4].facts.rss_bytes, 5ULL << 30);
  EXPECT_EQ(holders[5].kind, HolderKind::kGpuProcess);
  EXPECT_FALSE(holders[5].in_proc);
  // `self` is left out, and without NVML the other-namespace entry is gone.
  const auto without = FindPoolHolders(root, std::nullopt, 1111);
  ASSERT_EQ(without.size(), 4u);
  EXPECT_EQ(without[0].facts.pid, 1112);
}

}  // namespace
}  // namespace headroom
