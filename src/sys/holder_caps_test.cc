#include "sys/holder_caps.h"

#include <gtest/gtest.h>

namespace headroom {
namespace {

using Env = std::map<std::string, std::string>;

TEST(FlagValue, BothFormsLastWins) {
  const std::vector<std::string> w = {"x", "--a", "1", "--a=2", "-c", "8192", "--b"};
  EXPECT_EQ(FlagValue(w, {"--a"}), "2");
  EXPECT_EQ(FlagValue(w, {"--ctx-size", "-c"}), "8192");
  EXPECT_FALSE(FlagValue(w, {"--b"}));  // no value after it
  EXPECT_FALSE(FlagValue(w, {"--ab"}));
  EXPECT_FALSE(FlagValue({"--abc=1"}, {"--ab"}));  // a longer flag is not this one
}

TEST(ParseFraction, Range) {
  EXPECT_EQ(ParseFraction("0.5"), 0.5);
  EXPECT_EQ(ParseFraction("1"), 1.0);
  EXPECT_FALSE(ParseFraction("0"));
  EXPECT_FALSE(ParseFraction("1.5"));
  EXPECT_FALSE(ParseFraction("0.5x"));
  EXPECT_FALSE(ParseFraction("nan"));
  EXPECT_FALSE(ParseFraction(""));
}

TEST(HolderCap, VllmFlagInBothFormsDefaultAndNote) {
  auto cap = ParseHolderCap(HolderKind::kVllm,
                            {"vllm", "serve", "m", "--gpu-memory-utilization", "0.5"}, Env{});
  EXPECT_EQ(cap.pool_fraction, 0.5);
  EXPECT_EQ(cap.source, "--gpu-memory-utilization");
  ASSERT_FALSE(cap.notes.empty());
  EXPECT_NE(EnglishText(cap.notes.back()).find("not a hard cap on unified memory"),
            std::string::npos);
  cap = ParseHolderCap(HolderKind::kVllm, {"vllm", "serve", "--gpu_memory_utilization=0.7"}, Env{});
  EXPECT_EQ(cap.pool_fraction, 0.7);
  cap = ParseHolderCap(HolderKind::kVllm, {"vllm", "serve", "m"}, Env{});
  EXPECT_EQ(cap.pool_fraction, 0.9);
  EXPECT_EQ(cap.source, "vLLM default");
  cap = ParseHolderCap(HolderKind::kVllm, {"vllm", "--gpu-memory-utilization", "lots"}, Env{});
  EXPECT_FALSE(cap.pool_fraction);
  EXPECT_NE(EnglishText(cap.notes.front()).find("'lots' is not a fraction"), std::string::npos);
}

TEST(HolderCap, SglangTgiFromFlagOrEnvironment) {
  auto cap =
      ParseHolderCap(HolderKind::kSglang,
                     {"python", "-m", "sglang.launch_server", "--mem-fraction-static=0.6"}, Env{});
  EXPECT_EQ(cap.pool_fraction, 0.6);
  cap = ParseHolderCap(HolderKind::kSglang, {"python", "-m", "sglang.launch_server"}, Env{});
  EXPECT_FALSE(cap.pool_fraction);  // SGLang picks its own: no default assumed
  cap = ParseHolderCap(HolderKind::kTgi, {"text-generation-launcher"},
                       Env{{"CUDA_MEMORY_FRACTION", "0.3"}});
  EXPECT_EQ(cap.pool_fraction, 0.3);
  EXPECT_EQ(cap.source, "CUDA_MEMORY_FRACTION");
  cap = ParseHolderCap(HolderKind::kTgi,
                       {"text-generation-launcher", "--cuda-memory-fraction", "0.4"},
                       Env{{"CUDA_MEMORY_FRACTION", "0.3"}});
  EXPECT_EQ(cap.pool_fraction, 0.4);  // the flag wins, as clap does
  cap = ParseHolderCap(HolderKind::kTgi, {"text-generation-launcher"}, std::nullopt);
  EXPECT_EQ(cap.pool_fraction, 1.0);
  EXPECT_NE(EnglishText(cap.notes.back()).find("environment not readable"), std::string::npos);
}

TEST(HolderCap, OllamaSettingsFromEnvironmentOnly) {
  const auto cap = ParseHolderCap(HolderKind::kOllama, {"ollama", "serve"},
                                  Env{{"OLLAMA_MAX_LOADED_MODELS", "2"},
                                      {"OLLAMA_NUM_PARALLEL", "4"},
                                      {"OLLAMA_GPU_OVERHEAD", "1073741824"},
                                      {"HF_TOKEN", "secret"}});
  EXPECT_FALSE(cap.pool_fraction);
  ASSERT_EQ(cap.settings.size(), 3u);
  EXPECT_EQ(cap.settings[0].name, "OLLAMA_MAX_LOADED_MODELS");
  EXPECT_EQ(cap.settings[0].value, "2");
  EXPECT_EQ(cap.settings[1].value, "4");
  EXPECT_EQ(cap.settings[2].name, "OLLAMA_GPU_OVERHEAD");
  for (const auto& s : cap.settings) EXPECT_NE(s.value, "secret");
}

TEST(HolderCap, LlamaCppSettings) {
  auto cap = ParseHolderCap(
      HolderKind::kLlamaCpp,
      {"llama-server", "-m", "x.gguf", "--ctx-size=8192", "-ngl", "0", "--no-mmap"}, Env{});
  EXPECT_TRUE(cap.fixed_after_load);
  EXPECT_TRUE(cap.cpu_only);
  ASSERT_EQ(cap.settings.size(), 3u);
  EXPECT_EQ(cap.settings[0].value, "8192");
  EXPECT_EQ(cap.settings[1].value, "0");
  EXPECT_EQ(cap.settings[2].name, "--no-mmap");
  cap = ParseHolderCap(HolderKind::kLlamaCpp,
                       {"llama-server", "-c", "4096", "--n-gpu-layers", "99"}, Env{});
  EXPECT_FALSE(cap.cpu_only);
  EXPECT_EQ(cap.settings[0].value, "4096");
}

TEST(HolderCap, GuardTorchCapFromEnvironment) {
  auto cap = ParseHolderCap(HolderKind::kPythonTorch, {"python3", "train.py"},
                            Env{{"HEADROOM_TORCH_CAP_BYTES", "4294967296"}});
  EXPECT_EQ(cap.cap_bytes, 4294967296u);
  cap = ParseHolderCap(HolderKind::kPythonTorch, {"python3"},
                       Env{{"HEADROOM_TORCH_CAP_BYTES", "4G"}});
  EXPECT_FALSE(cap.cap_bytes);
}

TEST(HolderCap, CapsOfHoldersInOrderAndAPartHasNone) {
  PoolHolder server;
  server.kind = HolderKind::kVllm;
  server.facts.argv = {"vllm", "serve", "m", "--gpu-memory-utilization", "0.4"};
  PoolHolder worker = server;
  worker.part_of = 1111;
  const auto caps = HolderCaps({server, worker});
  ASSERT_EQ(caps.size(), 2u);
  EXPECT_EQ(caps[0].pool_fraction, 0.4);
  EXPECT_FALSE(caps[1].pool_fraction);
  EXPECT_TRUE(caps[1].settings.empty());
}

}  // namespace
}  // namespace headroom
