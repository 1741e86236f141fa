// Hand-computed expectations for every footprint term on real architectures. Each
// expected value is written out from the formula in docs/plan-formulas.md, not copied
// from the code's output.
#include "plan/footprint.h"

#include <gtest/gtest.h>

#include "plan/activations.h"

namespace headroom {
namespace {

// meta-llama/Llama-3.1-8B config.json.
ModelSpec Llama31_8B() {
  ModelSpec s;
  s.name = "llama-3.1-8b";
  s.family = "llama";
  s.hidden_size = 4096;
  s.num_layers = 32;
  s.num_heads = 32;
  s.num_kv_heads = 8;
  s.intermediate_size = 14336;
  s.vocab_size = 128256;
  EXPECT_EQ(EnglishText(CompleteAndValidate(&s)), "");
  return s;
}

// meta-llama/Llama-3.1-70B config.json.
ModelSpec Llama31_70B() {
  ModelSpec s = Llama31_8B();
  s.name = "llama-3.1-70b";
  s.hidden_size = 8192;
  s.num_layers = 80;
  s.num_heads = 64;
  s.num_kv_heads = 8;
  s.head_dim = 0;
  s.intermediate_size = 28672;
  EXPECT_EQ(EnglishText(CompleteAndValidate(&s)), "");
  return s;
}

// mistralai/Mixtral-8x7B-v0.1 config.json.
ModelSpec Mixtral8x7B() {
  ModelSpec s;
  s.name = "mixtral-8x7b";
  s.family = "mixtral";
  s.hidden_size = 4096;
  s.num_layers = 32;
  s.num_heads = 32;
  s.num_kv_heads = 8;
  s.intermediate_size = 14336;
  s.vocab_size = 32000;
  s.num_experts = 8;
  s.experts_per_token = 2;
  EXPECT_EQ(EnglishText(CompleteAndValidate(&s)), "");
  return s;
}

TEST(Footprint, Llama8BParameterCountIsThePublishedOne) {
  EXPECT_EQ(ArchitectureParams(Llama31_8B()), 8'030'261'248ULL);
}

TEST(Footprint, Llama8BFullFineTuneEveryTerm) {
  Workload w;
  w.method = Method::kFull;
  w.weight_dtype = DType::kBf16;
  w.grad_ckpt = false;
  w.seq = 2048;
  const ModelSpec s = Llama31_8B();
  const Footprint f = ComputeFootprint(s, w);
  const uint64_t p = 8'030'261'248ULL;
  EXPECT_EQ(f.trainable_params, p);
  EXPECT_EQ(f.weights_bytes, 2 * p);         // bf16
  EXPECT_EQ(f.gradients_bytes, 2 * p);       // bf16 gradients
  EXPECT_EQ(f.optimizer_bytes, 2 * 2 * p);   // AdamW: two bf16 states
  EXPECT_EQ(f.optimizer_step_bytes, 2 * p);  // foreach: one parameter-sized buffer

  // Per layer and token (h 4096, q_dim 4096, MLP 14336, c = 2):
  //   norm 1: fp32 copy 4h + normalised 2h; its output 2h (q/k/v weights need it)
  //   SDPA: q, k, v (after repeat_kv) and output 4 x 2 x 4096, lse 4 x 32; o input 2 x 4096
  //   norm 2 as norm 1; MLP: gate, up, silu 3 x 2 x 14336; down input 2 x 14336
  const uint64_t h = 4096, i = 14336;
  const uint64_t per_layer = (4 * h + 2 * h) + 2 * h + (4 * 2 * h + 4 * 32) + 2 * h +
                             (4 * h + 2 * h) + 2 * h + 3 * 2 * i + 2 * i;
  EXPECT_EQ(per_layer, 221'312u);
  EXPECT_EQ(f.layer_activations_bytes, 32 * per_layer * 2048);
  // Loss: bf16 logits + fp32 copy + shifted copy + log-softmax: (2 + 12) B x vocab.
  EXPECT_EQ(f.logits_bytes, 14ULL * 128256 * 2048);
  EXPECT_EQ(f.activations_bytes, f.layer_activations_bytes + f.logits_bytes);

  // Backward peak: weights + states + activations + the embedding's gradient.
  EXPECT_EQ(f.backward_peak_bytes, 2 * p + 4 * p + f.activations_bytes + 2ULL * 128256 * 4096);
  EXPECT_EQ(f.step_peak_bytes, 2 * p + 2 * p + 4 * p + 2 * p);
  EXPECT_EQ(f.tensor_peak_bytes, std::max(f.backward_peak_bytes, f.step_peak_bytes));
  // Overhead: 800 MiB context + 10 % slack + 1.5 GiB host process.
  EXPECT_EQ(f.overhead_bytes,
            800ULL * 1024 * 1024 + f.tensor_peak_bytes / 10 + 1536ULL * 1024 * 1024);
  EXPECT_EQ(f.steady_peak_bytes, f.tensor_peak_bytes + f.overhead_bytes);
}

TEST(Footprint, Llama8BGradientCheckpointingKeepsLayerInputs) {
  Workload w;  // LoRA r16 all-linear, bf16, ckpt on, seq 2048
  const Footprint f = ComputeFootprint(Llama31_8B(), w);
  // Checkpoints: 32 layers x 2 B x 4096 per token; the recomputed layer (LoRA, dropout)
  // is smaller than the loss peak, so it adds nothing.
  const ActivationModel am = ModelActivations(Llama31_8B(), w);
  EXPECT_LT(am.layer_bytes_per_token, am.loss_bytes_per_token);
  EXPECT_EQ(f.layer_activations_bytes, 32ULL * 2 * 4096 * 2048);
  EXPECT_EQ(f.logits_bytes, 14ULL * 128256 * 2048);
}

TEST(Footprint, Llama70BQloraWeightsAndAdapters) {
  Workload w;
  w.method = Method::kQlora;
  w.weight_dtype = DType::kNf4;
  const ModelSpec s = Llama31_70B();
  const Footprint f = ComputeFootprint(s, w);
  // LoRA r16 on every linear of 80 layers: q 8192+8192, k and v 8192+1024, o 8192+8192,
  // gate and up 8192+28672, down 28672+8192.
  const uint64_t per_layer = 16 * ((8192 + 8192) * 2 + (8192 + 1024) * 2 + (8192 + 28672) * 3);
  EXPECT_EQ(f.trainable_params, 80 * per_layer);
  EXPECT_EQ(f.trainable_params, 207'093'760u);
  // Quantized: the decoder linears; embeddings and lm_head (untied) stay bf16.
  const uint64_t linears = 80ULL * (8192ULL * 8192 * 2 + 8192ULL * 1024 * 2 + 8192ULL * 28672 * 3);
  EXPECT_EQ(f.quantized_params, linears);
  const uint64_t rest = f.total_params - linears;
  EXPECT_EQ(rest, 2ULL * 128256 * 8192 + 80ULL * 2 * 8192 + 8192);  // embed, head, norms
  const double nf4_dq = 0.5 + 1.0 / 64 + 4.0 / (64 * 256);
  const double expected = static_cast<double>(linears) * nf4_dq + static_cast<double>(rest) * 2 +
                          static_cast<double>(f.trainable_params) * 4;  // fp32 adapters
  EXPECT_NEAR(static_cast<double>(f.weights_bytes), expected, 2.0);
  EXPECT_EQ(f.gradients_bytes, 4 * f.trainable_params);
  EXPECT_EQ(f.optimizer_bytes, 8 * f.trainable_params);
  // Load: one 5 GB shard + the bf16 copy of the largest linear (8192 x 28672) while it is
  // quantized.
  EXPECT_EQ(f.load_transient_bytes, 5'000'000'000ULL + 2ULL * 8192 * 28672);
}

// meta-llama/Llama-2-7b-hf config.json.
ModelSpec Llama2_7B() {
  ModelSpec s = Llama31_8B();
  s.name = "llama-2-7b";
  s.num_kv_heads = 32;
  s.intermediate_size = 11008;
  s.vocab_size = 32000;
  EXPECT_EQ(EnglishText(CompleteAndValidate(&s)), "");
  return s;
}

TEST(Footprint, TheLoadQuantizerSetsTheDeviceTransient) {
  Workload w;
  w.method = Method::kQlora;
  w.weight_dtype = DType::kNf4;
  const ModelSpec s = Llama2_7B();
  const uint64_t mlp = 11008ULL * 4096;  // the largest linear: gate, up and down
  const uint64_t shard = 5'000'000'000ULL;
  // bitsandbytes: the bf16 copy of the largest linear.
  const Footprint bnb = ComputeFootprint(s, w);
  EXPECT_EQ(bnb.load_quantize_bytes, 2 * mlp);
  EXPECT_EQ(bnb.load_transient_bytes, shard + 2 * mlp);
  // torchao (chunks of 1024^2 elements): input 2 B + scaled blocks 2 B + codes 1 B per
  // element, and one chunk's [chunk, 16] bf16 difference and its abs: 2 x 16 x 2 B x 1024^2.
  w.quantizer = Quantizer::kTorchao;
  const Footprint ao = ComputeFootprint(s, w);
  EXPECT_EQ(ao.load_quantize_bytes, 5 * mlp + 64ULL * 1024 * 1024);
  EXPECT_EQ(ao.load_transient_bytes, shard + 5 * mlp + 64ULL * 1024 * 1024);
  EXPECT_EQ(ao.load_peak_bytes - bnb.load_peak_bytes, 3 * mlp + 64ULL * 1024 * 1024);
  // torchao 0.1: the difference over the whole tensor: 2 + 2 + 2 x 16 x 2 = 68 B/element,
  // 3.07 GB for one 11008 x 4096 weight.
  w.quantizer = Quantizer::kTorchaoWholeTensor;
  const Footprint whole = ComputeFootprint(s, w);
  EXPECT_EQ(whole.load_quantize_bytes, 68 * mlp);
  EXPECT_EQ(whole.load_quantize_bytes, 3'066'036'224ULL);
  // Only what is quantized counts: torchtune with LoRA on q and v quantizes the 4096 x 4096
  // projections only.
  w.quantize_only_targets = true;
  w.lora_targets = {"q", "v"};
  EXPECT_EQ(ComputeFootprint(s, w).load_quantize_bytes, 68ULL * 4096 * 4096);
  // The training-time steady peak does not change with the quantizer.
  EXPECT_EQ(whole.steady_peak_bytes, bnb.steady_peak_bytes);
  EXPECT_EQ(ao.steady_peak_bytes, bnb.steady_peak_bytes);
}

TEST(Footprint, ReservedPeakKeepsWhatTheLoadReserved) {
  Workload w;
  w.method = Method::kQlora;
  w.weight_dtype = DType::kNf4;
  w.batch = 2;
  w.seq = 512;
  w.quantizer = Quantizer::kTorchaoWholeTensor;
  const ModelSpec s = Llama2_7B();
  const Footprint f = ComputeFootprint(s, w);
  // Weights + 68 B x 11008 x 4096 exceed the training tensors at batch 2 x 512.
  const uint64_t load = f.weights_bytes + 68ULL * 11008 * 4096;
  ASSERT_GT(load, f.tensor_peak_bytes);
  EXPECT_NEAR(static_cast<double>(ReservedPeakBytes(f, w)), static_cast<double>(load) * 1.1, 1.0);
  // A bf16 LoRA load quantizes nothing: the reservation is the training one.
  Workload lora = w;
  lora.method = Method::kLora;
  lora.weight_dtype = DType::kBf16;
  const Footprint fl = ComputeFootprint(s, lora);
  EXPECT_EQ(fl.load_quantize_bytes, 0u);
  EXPECT_EQ(ReservedPeakBytes(fl, lora), fl.tensor_peak_bytes + fl.allocator_slack_bytes);
}

TEST(Footprint, NoDoubleQuantCostsMore) {
  Workload w;
  w.method = Method::kQlora;
  w.weight_dtype = DType::kNf4;
  const uint64_t dq = ComputeFootprint(Llama31_70B(), w).weights_bytes;
  w.double_quant = false;
  const uint64_t plain = ComputeFootprint(Llama31_70B(), w).weights_bytes;
  const uint64_t linears = ComputeFootprint(Llama31_70B(), w).quantized_params;
  // 4/64 - (1/64 + 4/16384) B per quantized parameter.
  EXPECT_NEAR(static_cast<double>(plain - dq),
              static_cast<double>(linears) * (4.0 / 64 - 1.0 / 64 - 4.0 / 16384), 2.0);
}

TEST(Footprint, MixtralLoraCountsEveryExpert) {
  Workload w;
  const ModelSpec s = Mixtral8x7B();
  EXPECT_EQ(ArchitectureParams(s), 46'702'792'704ULL);
  const Footprint f = ComputeFootprint(s, w);
  // q 4096+4096, k and v 4096+1024, o 4096+4096, 8 experts x (gate, up 4096+14336; down).
  const uint64_t per_layer = 16 * (8192 * 2 + 5120 * 2 + 8 * 3 * (4096 + 14336));
  EXPECT_EQ(f.trainable_params, 32 * per_layer);
  // Activations use the two active experts' width: 2 x 14336 in the MLP terms.
  const ActivationModel am = ModelActivations(s, w);
  const Workload& dense_w = w;
  ModelSpec dense = s;
  dense.num_experts = 0;
  dense.intermediate_size = 2 * 14336;
  EXPECT_GT(am.layer_bytes_per_token, ModelActivations(dense, dense_w).layer_bytes_per_token);
}

TEST(Footprint, GptOssLoraReachesAttentionOnly) {
  // openai/gpt-oss-120b: 36 layers, hidden 2880, 64 heads x 64, 8 kv heads, 128 fused experts.
  ModelSpec s;
  s.family = "gpt_oss";
  s.hidden_size = 2880;
  s.num_layers = 36;
  s.num_heads = 64;
  s.num_kv_heads = 8;
  s.head_dim = 64;
  s.intermediate_size = 2880;
  s.vocab_size = 201088;
  s.num_experts = 128;
  s.experts_per_token = 4;
  ASSERT_EQ(EnglishText(CompleteAndValidate(&s)), "");
  Workload w;
  const Footprint f = ComputeFootprint(s, w);
  // q 2880 -> 4096, k and v 2880 -> 512, o 4096 -> 2880, rank 16, 36 layers.
  EXPECT_EQ(f.trainable_params, 36u * 16 * ((2880 + 4096) * 2 + (2880 + 512) * 2));
  s.family = "mixtral";  // the same shapes as separate Linear experts: adapted too
  EXPECT_GT(ComputeFootprint(s, w).trainable_params, 100 * f.trainable_params);
}

TEST(Footprint, OptimizerVariants) {
  Workload w;
  w.method = Method::kFull;
  const ModelSpec s = Llama31_8B();
  const uint64_t p = 8'030'261'248ULL;
  w.master_weights = true;
  EXPECT_EQ(ComputeFootprint(s, w).optimizer_bytes, 2 * 4 * p + 4 * p);
  w.master_weights = false;
  w.optimizer = Optimizer::kAdamW8bit;
  const Footprint f8 = ComputeFootprint(s, w);
  EXPECT_NEAR(static_cast<double>(f8.optimizer_bytes), static_cast<double>(p) * (2 + 8.0 / 256), 2);
  EXPECT_EQ(f8.optimizer_step_bytes, 0u);
  w.optimizer = Optimizer::kSgd;
  EXPECT_EQ(ComputeFootprint(s, w).optimizer_bytes, 2 * p);
  w.optimizer = Optimizer::kAdamW;
  w.optimizer_step = OptimizerStep::kFused;
  EXPECT_EQ(ComputeFootprint(s, w).optimizer_step_bytes, 0u);
  w.optimizer_step = OptimizerStep::kLoop;
  // The largest tensor: the 128256 x 4096 embedding, in bf16.
  EXPECT_EQ(ComputeFootprint(s, w).optimizer_step_bytes, 2ULL * 128256 * 4096);
  w.optimizer = Optimizer::kAdafactor;
  EXPECT_LT(ComputeFootprint(s, w).optimizer_bytes, p / 100);  // factored: tiny
}

TEST(Footprint, EagerAttentionAddsTheSeqSquaredTerm) {
  Workload w;
  w.grad_ckpt = false;
  w.seq = 4096;
  const uint64_t sdpa = ComputeFootprint(Llama31_8B(), w).layer_activations_bytes;
  w.attention = Attention::kEager;
  const uint64_t eager = ComputeFootprint(Llama31_8B(), w).layer_activations_bytes;
  // Eager drops SDPA's saved output (2 x 4096) and lse (4 x 32) and adds the fp32
  // softmax plus its bf16 copy: (4 + 2) x 32 heads x 4096 per token and layer.
  const int64_t delta_per_token = (4 + 2) * 32 * 4096 - (2 * 4096 + 4 * 32);
  EXPECT_EQ(static_cast<int64_t>(eager - sdpa), 32LL * delta_per_token * 4096);
}

TEST(Footprint, DpoDoublesTokensAndFullKeepsAReference) {
  Workload w;
  w.method = Method::kFull;
  const Footprint sft = ComputeFootprint(Llama31_8B(), w);
  w.kind = WorkloadKind::kDpo;
  const Footprint dpo = ComputeFootprint(Llama31_8B(), w);
  EXPECT_EQ(dpo.logits_bytes, 2 * sft.logits_bytes);
  EXPECT_EQ(dpo.reference_bytes, 2 * 8'030'261'248ULL);
  EXPECT_EQ(dpo.weights_bytes, sft.weights_bytes + dpo.reference_bytes);
  w.method = Method::kLora;  // the reference is the base with the adapter off: free
  EXPECT_EQ(ComputeFootprint(Llama31_8B(), w).reference_bytes, 0u);
}

TEST(Footprint, GrpoAddsTheRolloutShareOfThePool) {
  Workload w;
  w.kind = WorkloadKind::kGrpo;
  w.rollout_fraction = 0.5;
  FootprintOptions o;
  o.pool_bytes = 127600748ULL * 1024;
  const Footprint f = ComputeFootprint(Llama31_8B(), w, o);
  EXPECT_EQ(f.rollout_bytes, 127600748ULL * 1024 / 2);
  EXPECT_EQ(f.steady_peak_bytes, f.tensor_peak_bytes + f.overhead_bytes + f.rollout_bytes);
}

TEST(Footprint, LossKinds) {
  Workload w;
  w.loss = LossKind::kChunked;
  EXPECT_EQ(ComputeFootprint(Llama31_8B(), w).logits_bytes, 13ULL * 128256 * 2048 / 2);
  w.loss = LossKind::kFused;
  EXPECT_EQ(ComputeFootprint(Llama31_8B(), w).logits_bytes, 2ULL * 128256 * 2048 / 8);
}

TEST(Footprint, OverheadOverride) {
  Workload w;
  FootprintOptions o;
  o.overhead_bytes = 123;
  const Footprint f = ComputeFootprint(Llama31_8B(), w, o);
  EXPECT_EQ(f.overhead_bytes, 123u);
  EXPECT_EQ(f.steady_peak_bytes, f.tensor_peak_bytes + 123);
}

TEST(Footprint, PeaksGrowWithSeqAndBatch) {
  Workload w;
  uint64_t last = 0;
  for (int64_t seq : {256, 512, 1024, 2048, 4096, 8192}) {
    w.seq = seq;
    const uint64_t peak = ComputeFootprint(Llama31_8B(), w).steady_peak_bytes;
    EXPECT_GT(peak, last) << seq;
    last = peak;
  }
}

}  // namespace
}  // namespace headroom
