#include "plan/framework_profile.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "model/catalog.h"
#include "plan/footprint.h"
#include "plan/plan_request.h"

namespace headroom {
namespace {

const ModelSpec& Model(const char* name) {
  const ModelSpec* m = FindModel(name);
  EXPECT_NE(m, nullptr) << name;
  return *m;
}

Workload Qlora(Framework f) {
  Workload w = ProfileWorkload(f);
  w.method = Method::kQlora;
  w.weight_dtype = DType::kNf4;
  return w;
}

TEST(FrameworkProfile, OneProfilePerNameAndTheNamesParseBack) {
  std::set<std::string> names;
  std::set<int> frameworks;
  for (const auto& p : FrameworkProfiles()) {
    EXPECT_TRUE(names.insert(std::string(p.name)).second) << p.name;
    EXPECT_TRUE(frameworks.insert(static_cast<int>(p.framework)).second) << p.name;
    auto parsed = ParseFramework(p.name);
    ASSERT_TRUE(parsed) << p.name;
    EXPECT_EQ(*parsed, p.framework);
    EXPECT_EQ(Name(p.framework), p.name);
    EXPECT_FALSE(p.stack.empty()) << p.name;
  }
  EXPECT_EQ(names.size(), 9u);
  EXPECT_EQ(FrameworkProfiles().front().framework, Framework::kHf);
  EXPECT_EQ(*ParseFramework("llamafactory"), Framework::kLlamaFactory);
  EXPECT_EQ(*ParseFramework("LLaMA-Factory"), Framework::kLlamaFactory);
  EXPECT_EQ(*ParseFramework("lit-gpt"), Framework::kLitgpt);
  EXPECT_EQ(*ParseFramework("nemo"), Framework::kMegatron);
}

TEST(FrameworkProfile, AnUnknownNameListsEveryName) {
  auto r = ParseFramework("deepspeed-chat");
  ASSERT_FALSE(r);
  const std::string what = EnglishText(r.error().what);
  EXPECT_NE(what.find("deepspeed-chat"), std::string::npos) << what;
  for (const auto& p : FrameworkProfiles()) {
    EXPECT_NE(what.find(std::string(p.name)), std::string::npos) << what;
  }
}

TEST(FrameworkProfile, DefaultsFillOnlyTheFlagsNotGiven) {
  PlanFlagText text;
  text.framework = "unsloth";
  text.loss = "standard";  // given: kept
  auto f = ApplyFrameworkDefaults(&text);
  ASSERT_TRUE(f);
  EXPECT_EQ(*f, Framework::kUnsloth);
  EXPECT_EQ(text.optimizer, "adamw-8bit");
  EXPECT_EQ(text.grad_ckpt, "offload");
  EXPECT_EQ(text.loss, "standard");

  PlanFlagText none;  // no --framework: hf
  ASSERT_TRUE(ApplyFrameworkDefaults(&none));
  EXPECT_EQ(none.optimizer, "adamw");
  EXPECT_EQ(none.optimizer_step, "fused");
  EXPECT_EQ(none.grad_ckpt, "on");
  EXPECT_EQ(none.loss, "standard");

  PlanFlagText litgpt;
  litgpt.framework = "litgpt";
  ASSERT_TRUE(ApplyFrameworkDefaults(&litgpt));
  EXPECT_EQ(litgpt.grad_ckpt, "off");
  EXPECT_EQ(litgpt.loss, "chunked");
}

TEST(FrameworkProfile, ParsedRequestsCarryTheProfileAndExplicitFlagsWin) {
  PlanFlagText text;
  text.model = "llama-3.1-8b";
  text.method = "qlora";
  text.framework = "unsloth";
  text.budget = "100GB";
  Message error;
  auto r = ParsePlanRequest(text, &error);
  ASSERT_TRUE(r) << EnglishText(error);
  EXPECT_EQ(r->workload.framework, Framework::kUnsloth);
  EXPECT_EQ(r->workload.optimizer, Optimizer::kAdamW8bit);
  EXPECT_EQ(r->workload.loss, LossKind::kFused);
  EXPECT_TRUE(r->workload.offload_checkpoints);
  EXPECT_EQ(r->workload.lora_dropout, 0);

  text.optimizer = "adamw";
  text.grad_ckpt = "on";
  text.lora_dropout = "0.1";
  r = ParsePlanRequest(text, &error);
  ASSERT_TRUE(r) << EnglishText(error);
  EXPECT_EQ(r->workload.optimizer, Optimizer::kAdamW);
  EXPECT_TRUE(r->workload.grad_ckpt);
  EXPECT_FALSE(r->workload.offload_checkpoints);
  EXPECT_DOUBLE_EQ(r->workload.lora_dropout, 0.1);

  text.framework = "keras";
  EXPECT_FALSE(ParsePlanRequest(text, &error));
  EXPECT_EQ(EnglishText(error).rfind("--framework: unknown framework 'keras' (expected hf|", 0), 0u)
      << EnglishText(error);
}

TEST(FrameworkProfile, RequestJsonKeepsTheFrameworkAndOffload) {
  PlanFlagText text;
  text.model = "llama-3.1-8b";
  text.method = "qlora";
  text.framework = "unsloth";
  text.platform = "discrete";
  Message error;
  auto r = ParsePlanRequest(text, &error);
  ASSERT_TRUE(r) << EnglishText(error);
  const auto j = PlanRequestToJson(*r);
  EXPECT_EQ(j["framework"], "unsloth");
  EXPECT_EQ(j["grad_ckpt"], "offload");
  EXPECT_EQ(j["platform"], "discrete");
  auto back = PlanRequestFromJson(j, &error);
  ASSERT_TRUE(back) << EnglishText(error);
  EXPECT_EQ(back->workload.framework, Framework::kUnsloth);
  EXPECT_TRUE(back->workload.offload_checkpoints);
  EXPECT_EQ(back->workload.optimizer, Optimizer::kAdamW8bit);
  EXPECT_EQ(back->unified_memory, std::optional<bool>(false));
  EXPECT_EQ(PlanRequestToJson(*back), j);
}

TEST(FrameworkProfile, UnslothPlansBelowHfForTheSame70bQlora) {
  const ModelSpec& m = Model("llama-3.1-70b");
  const Footprint hf = ComputeFootprint(m, Qlora(Framework::kHf));
  const Footprint unsloth = ComputeFootprint(m, Qlora(Framework::kUnsloth));
  EXPECT_LT(unsloth.steady_peak_bytes, hf.steady_peak_bytes);
  // The fused loss never builds the fp32 logits: far less than hf's.
  EXPECT_LT(unsloth.logits_bytes * 4, hf.logits_bytes);
  // 8-bit AdamW: about 2 B per trainable parameter against fp32 AdamW's 8.
  EXPECT_LT(unsloth.optimizer_bytes * 3, hf.optimizer_bytes);
}

TEST(FrameworkProfile, TrlUpcastsEverythingNotQuantizedToFp32) {
  const ModelSpec& m = Model("llama-3.1-70b");
  const Footprint hf = ComputeFootprint(m, Qlora(Framework::kHf));
  const Footprint trl = ComputeFootprint(m, Qlora(Framework::kTrl));
  ASSERT_EQ(trl.quantized_params, hf.quantized_params);
  const uint64_t rest = hf.total_params - hf.quantized_params;
  // The same weights except the non-quantized ones: 4 B instead of 2.
  EXPECT_NEAR(static_cast<double>(trl.weights_bytes - hf.weights_bytes),
              2.0 * static_cast<double>(rest), 1e3);
  // And the residual stream (the checkpoints) is fp32.
  EXPECT_GT(trl.layer_activations_bytes, hf.layer_activations_bytes);
  // Not a 4-bit load: nothing to upcast.
  Workload lora = ProfileWorkload(Framework::kTrl);
  Workload hf_lora = ProfileWorkload(Framework::kHf);
  EXPECT_EQ(ComputeFootprint(m, lora).weights_bytes, ComputeFootprint(m, hf_lora).weights_bytes);
}

TEST(FrameworkProfile, TorchtuneQuantizesOnlyTheWrappedLinears) {
  const ModelSpec& m = Model("llama-3.1-8b");
  Workload tt = Qlora(Framework::kTorchtune);
  tt.lora_targets = {"q", "v"};
  Workload hf = Qlora(Framework::kHf);
  hf.lora_targets = {"q", "v"};
  const Footprint ft = ComputeFootprint(m, tt);
  const Footprint fh = ComputeFootprint(m, hf);
  // q: hidden x hidden, v: hidden x kv_dim, per layer.
  const uint64_t kv_dim = static_cast<uint64_t>(m.num_kv_heads * m.head_dim);
  const uint64_t h = static_cast<uint64_t>(m.hidden_size);
  EXPECT_EQ(ft.quantized_params,
            static_cast<uint64_t>(m.num_layers) *
                (h * static_cast<uint64_t>(m.num_heads * m.head_dim) + h * kv_dim));
  EXPECT_LT(ft.quantized_params, fh.quantized_params);
  EXPECT_GT(ft.weights_bytes, fh.weights_bytes);
}

TEST(FrameworkProfile, TorchtuneQuantizesWithTorchaoOnTheDevice) {
  for (const FrameworkProfile& p : FrameworkProfiles()) {
    EXPECT_EQ(ProfileWorkload(p.framework).quantizer,
              p.framework == Framework::kTorchtune ? Quantizer::kTorchao : Quantizer::kBitsandbytes)
        << p.name;
  }
  // torchao's buffers (5 B per element of the largest wrapped weight + one 64 MiB chunk)
  // exceed bitsandbytes' bf16 copy (2 B per element) at load; training is unchanged.
  const ModelSpec& m = Model("llama-3.1-8b");
  Workload tt = Qlora(Framework::kTorchtune);
  Workload bnb = tt;
  bnb.quantizer = Quantizer::kBitsandbytes;
  const Footprint ft = ComputeFootprint(m, tt);
  const Footprint fb = ComputeFootprint(m, bnb);
  const uint64_t mlp = static_cast<uint64_t>(m.hidden_size * m.intermediate_size);
  EXPECT_EQ(ft.load_quantize_bytes - fb.load_quantize_bytes, 3 * mlp + 64ULL * 1024 * 1024);
  EXPECT_EQ(ft.steady_peak_bytes, fb.steady_peak_bytes);
}

TEST(FrameworkProfile, MegatronHoldsEighteenBytesPerParameterForAFullFineTune) {
  const ModelSpec& m = Model("llama-3.2-1b");
  Workload w = ProfileWorkload(Framework::kMegatron);
  w.method = Method::kFull;
  const Footprint f = ComputeFootprint(m, w);
  const double p = static_cast<double>(f.total_params);
  EXPECT_NEAR(static_cast<double>(f.weights_bytes), 2 * p, 1e3);
  EXPECT_NEAR(static_cast<double>(f.gradients_bytes), 4 * p, 1e3);
  EXPECT_NEAR(static_cast<double>(f.optimizer_bytes), 12 * p, 1e3);  // master + two states
  EXPECT_EQ(f.optimizer_step_bytes, 0u);                             // fused
  EXPECT_EQ(f.step_peak_bytes, f.weights_bytes + f.gradients_bytes + f.optimizer_bytes);
}

TEST(FrameworkProfile, OffloadedCheckpointsStayInAUnifiedPoolAndLeaveADiscreteDevice) {
  const ModelSpec& m = Model("llama-3.1-70b");
  const Workload w = Qlora(Framework::kUnsloth);
  FootprintOptions unified;
  FootprintOptions discrete;
  discrete.unified_memory = false;
  const Footprint fu = ComputeFootprint(m, w, unified);
  const Footprint fd = ComputeFootprint(m, w, discrete);
  // 80 layers x 8192 x 2 B per token, 2048 tokens.
  const uint64_t checkpoints = 80ULL * 8192 * 2 * 2048;
  EXPECT_EQ(fu.offloaded_bytes, checkpoints);
  EXPECT_EQ(fd.offloaded_bytes, checkpoints);
  EXPECT_EQ(fu.host_offload_bytes, 0u);
  EXPECT_EQ(fd.host_offload_bytes, checkpoints);
  EXPECT_EQ(fu.layer_activations_bytes, fd.layer_activations_bytes + checkpoints);
  EXPECT_LT(fd.tensor_peak_bytes, fu.tensor_peak_bytes);
  bool host_line = false;
  for (const auto& t : fd.terms) host_line |= t.key == "host_offload" && t.bytes == checkpoints;
  EXPECT_TRUE(host_line);
  bool said = false;
  for (const auto& n : fu.notes) said |= EnglishText(n).find("unified pool") != std::string::npos;
  EXPECT_TRUE(said);
  // Device checkpointing: nothing offloaded anywhere.
  Workload on = w;
  on.offload_checkpoints = false;
  EXPECT_EQ(ComputeFootprint(m, on, discrete).host_offload_bytes, 0u);
  EXPECT_EQ(ComputeFootprint(m, on, discrete).tensor_peak_bytes, fu.tensor_peak_bytes);
}

// The targets for the 70B QLoRA plan (catalog model, batch 1 x 2048, unified pool):
// Unsloth's stack 40-48 GB, Transformers + PEFT 48-60 GB, in decimal GB.
TEST(FrameworkProfile, SeventyBQloraSteadyPeaksPerStack) {
  const ModelSpec& m = Model("llama-3.1-70b");
  const double unsloth =
      static_cast<double>(ComputeFootprint(m, Qlora(Framework::kUnsloth)).steady_peak_bytes);
  const double hf =
      static_cast<double>(ComputeFootprint(m, Qlora(Framework::kHf)).steady_peak_bytes);
  EXPECT_GE(unsloth, 40e9);
  EXPECT_LE(unsloth, 48e9);
  EXPECT_GE(hf, 48e9);
  EXPECT_LE(hf, 60e9);
}

TEST(FrameworkProfile, FourBitPlansCountTheDequantizedLargestLinear) {
  const ModelSpec& m = Model("llama-3.1-8b");
  const Footprint q = ComputeFootprint(m, Qlora(Framework::kHf));
  // Llama-3.1-8B's largest linear is an MLP projection: 4096 x 14336, in bf16.
  EXPECT_EQ(q.dequant_bytes, 4096ULL * 14336 * 2);
  EXPECT_EQ(q.backward_peak_bytes,
            q.weights_bytes + q.optimizer_bytes + q.activations_bytes + q.dequant_bytes);
  EXPECT_EQ(ComputeFootprint(m, ProfileWorkload(Framework::kHf)).dequant_bytes, 0u);  // bf16 LoRA
}

TEST(FrameworkProfile, ExpandableSegmentsLeaveOnlyTheBlockRounding) {
  const ModelSpec& m = Model("llama-3.1-8b");
  Workload w = Qlora(Framework::kHf);
  const Footprint plain = ComputeFootprint(m, w);
  EXPECT_NEAR(static_cast<double>(plain.allocator_slack_bytes),
              0.10 * static_cast<double>(plain.tensor_peak_bytes), 1);
  w.expandable_segments = true;
  w.roundup_power2_divisions = 16;  // axolotl's setting
  const Footprint expandable = ComputeFootprint(m, w);
  EXPECT_EQ(expandable.tensor_peak_bytes, plain.tensor_peak_bytes);
  EXPECT_NEAR(static_cast<double>(expandable.allocator_slack_bytes),
              static_cast<double>(plain.tensor_peak_bytes) / 32, 1);
}

}  // namespace
}  // namespace headroom
