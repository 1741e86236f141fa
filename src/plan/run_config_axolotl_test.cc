// axolotl's attention and paged optimizers read as axolotl runs them
// (docs/plan-frameworks.md, "axolotl's offload, flash attention and paged optimizers").
#include <gtest/gtest.h>

#include <string>

#include "model/catalog.h"
#include "plan/footprint.h"
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
