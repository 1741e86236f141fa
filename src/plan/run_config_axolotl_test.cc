// axolotl's offload, attention and paged optimizers read as axolotl runs them
// (docs/plan-frameworks.md, "axolotl's offload, flash attention and paged optimizers").
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "model/catalog.h"
#include "plan/footprint.h"
#include "plan/plan_request.h"
#include "plan/run_config.h"
#include "testing_files.h"

namespace headroom {
namespace {

RunConfig AxolotlText(std::string_view text) {
  auto config = ParseRunConfig(text, "run.yaml", {});
  EXPECT_TRUE(config) << (config ? "" : EnglishText(config.error().what));
  return config ? *config : RunConfig{};
}

RunConfig Fixture(const std::string& name) {
  auto config = LoadRunConfig(testing::FixturePath("run_configs/" + name), {});
  EXPECT_TRUE(config) << (config ? "" : EnglishText(config.error().what));
  return config ? *config : RunConfig{};
}

bool Listed(const RunConfig& c, std::string_view key) {
  return std::any_of(c.not_modelled.begin(), c.not_modelled.end(),
                     [&](const std::string& k) { return k.starts_with(key); });
}

// A full fine-tune keeps the recompute and offloads the checkpoints: --grad-ckpt offload.
TEST(RunConfigAxolotl, OffloadOfAFullFineTuneIsCheckpointOffload) {
  const RunConfig c =
      AxolotlText("base_model: meta-llama/Llama-3.1-8B\ngradient_checkpointing: offload\n");
  EXPECT_EQ(c.text.grad_ckpt, "offload");
  EXPECT_FALSE(Listed(c, "gradient_checkpointing")) << c.not_modelled.size();
  const RunConfig ao = AxolotlText(
      "base_model: llama-3.1-8b\ngradient_checkpointing: true\nactivation_offloading: legacy\n");
  EXPECT_EQ(ao.text.grad_ckpt, "offload");
  EXPECT_TRUE(ao.not_modelled.empty());
  // The real file: a gpt-oss-20b full fine-tune with activation_offloading: true and a flash
  // attention kernel.
  const RunConfig gpt = Fixture("axolotl/gpt-oss-20b-fft-fsdp2-offload.yaml");
  EXPECT_EQ(gpt.text.method, "full");
  EXPECT_EQ(gpt.text.grad_ckpt, "offload");
  EXPECT_EQ(gpt.text.attention, "flash");
  EXPECT_FALSE(Listed(gpt, "activation_offloading"));
}

// With an adapter axolotl offloads every activation instead of recomputing: all of them in
// the one pool on unified memory, planned as --grad-ckpt off and listed.
TEST(RunConfigAxolotl, OffloadWithAnAdapterOffloadsEveryActivation) {
  const RunConfig q = Fixture("axolotl/qwen3-32b-qlora.yaml");
  EXPECT_EQ(q.text.grad_ckpt, "off");
  EXPECT_EQ(q.text.attention, "flash");
  ASSERT_FALSE(q.not_modelled.empty());
  EXPECT_EQ(q.not_modelled.front(),
            "gradient_checkpointing: offload (with an adapter every activation is offloaded: "
            "planned as --grad-ckpt off)");
  // hidden_states: only each layer's input, under checkpointing, whatever the method.
  const RunConfig h = AxolotlText(
      "base_model: llama-3.1-8b\nadapter: lora\ngradient_checkpointing: true\n"
      "activation_offloading: hidden_states\n");
  EXPECT_EQ(h.text.grad_ckpt, "offload");
  EXPECT_TRUE(h.not_modelled.empty());
  // To disk: neither pool; on, and listed.
  const RunConfig d =
      AxolotlText("base_model: llama-3.1-8b\ngradient_checkpointing: offload_disk\n");
  EXPECT_EQ(d.text.grad_ckpt, "on");
  EXPECT_TRUE(Listed(d, "gradient_checkpointing: offload_disk"));
}

// The offloaded checkpoints of the full fine-tune, planned: in the pool on unified memory (a
// note says so), the host share on a discrete GPU.
TEST(RunConfigAxolotl, OffloadedCheckpointsStayInTheUnifiedPool) {
  const RunConfig c = AxolotlText(
      "base_model: llama-3.1-8b\ngradient_checkpointing: offload\nsequence_len: 4096\n");
  Message error;
  const auto request = ParsePlanRequest(c.text, &error);
  ASSERT_TRUE(request) << EnglishText(error);
  EXPECT_TRUE(request->workload.grad_ckpt);
  EXPECT_TRUE(request->workload.offload_checkpoints);
  const ModelSpec& spec = *FindModel("llama-3.1-8b");
  const Footprint unified = ComputeFootprint(spec, request->workload, {});
  EXPECT_GT(unified.offloaded_bytes, 0u);
  EXPECT_EQ(unified.host_offload_bytes, 0u);
  bool noted = false;
  for (const Message& n : unified.notes)
    noted = noted || EnglishText(n).find("stay in the one unified pool") != std::string::npos;
  EXPECT_TRUE(noted);
  FootprintOptions discrete;
  discrete.unified_memory = false;
  const Footprint gpu = ComputeFootprint(spec, request->workload, discrete);
  EXPECT_EQ(gpu.host_offload_bytes, unified.offloaded_bytes);
  EXPECT_LT(gpu.layer_activations_bytes, unified.layer_activations_bytes);
}

// flash_attention: true is flash attention (the bytes of sdpa); paged_adamw_32bit is 32-bit
// AdamW states, paged_adamw_8bit 8-bit ones.
TEST(RunConfigAxolotl, FlashAttentionAndPagedOptimizers) {
  const RunConfig q = Fixture("axolotl/llama-3-qlora.yml");
  EXPECT_EQ(q.text.attention, "flash");
  EXPECT_EQ(q.text.optimizer, "adamw");
  const RunConfig f = Fixture("axolotl/llama-3-fft-8b.yaml");
  EXPECT_EQ(f.text.method, "full");
  EXPECT_EQ(f.text.attention, "flash");
  EXPECT_EQ(f.text.optimizer, "adamw-8bit");
  EXPECT_EQ(f.text.grad_ckpt, "on");
  // The first legacy flag set wins, as in axolotl: xformers before flash.
  EXPECT_EQ(AxolotlText("base_model: x\nxformers_attention: true\nflash_attention: true\n")
                .text.attention,
            "sdpa");
  EXPECT_EQ(AxolotlText("base_model: x\nattn_implementation: eager\n").text.attention, "eager");
  // Planned: flash saves what sdpa saves.
  Workload sdpa;
  Workload flash;
  flash.attention = Attention::kFlash;
  const ModelSpec& spec = *FindModel("llama-3.1-8b");
  EXPECT_EQ(ComputeFootprint(spec, flash).layer_activations_bytes,
            ComputeFootprint(spec, sdpa).layer_activations_bytes);
  Workload eager;
  eager.attention = Attention::kEager;
  eager.grad_ckpt = false;
  flash.grad_ckpt = false;
  EXPECT_LT(ComputeFootprint(spec, flash).layer_activations_bytes,
            ComputeFootprint(spec, eager).layer_activations_bytes);
  EXPECT_EQ(Name(Attention::kFlash), "flash");
  ASSERT_TRUE(ParseAttention("flash"));
  EXPECT_EQ(*ParseAttention("flash"), Attention::kFlash);
}

}  // namespace
}  // namespace headroom
