// Workload: how the model is trained (method, dtypes, optimizer, batch, sequence, memory
// savers), separate from what the model is (ModelSpec) and where it runs (Budget).
//
// Every enum has a Parse function that takes the user's spelling and returns an error that
// lists the accepted spellings; the CLI adds the flag name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "plan/framework.h"

namespace headroom {

enum class Method { kFull, kLora, kQlora, kNvfp4Lora };
enum class DType { kFp32, kBf16, kFp16, kFp8, kInt8, kNf4, kInt4, kNvfp4 };
enum class Optimizer { kAdamW, kAdamW8bit, kSgd, kAdafactor };
// How the optimizer step is executed in PyTorch: foreach (the default on CUDA) holds about
// one extra parameter-sized buffer during the step; fused does the update in one kernel;
// loop (foreach=False) holds one tensor's worth.
enum class OptimizerStep { kForeach, kFused, kLoop };
// flash: FlashAttention (flash-attn's kernels, attn_implementation flash_attention_2/3). It
// saves what SDPA's flash backend saves (q, k, v, the output and the fp32 log-sum-exp): the
// same bytes as sdpa, named as the run names it; eager materializes the scores.
enum class Attention { kSdpa, kEager, kFlash };
enum class WorkloadKind { kSft, kDpo, kGrpo };
// How the loss is computed from the hidden states: standard (full logits, fp32 upcast, as
// Hugging Face does), chunked (torchtune CEWithChunkedOutputLoss), fused (Liger / Unsloth /
// Cut Cross Entropy: the logits are never materialised whole).
enum class LossKind { kStandard, kChunked, kFused };
// How a 4-bit load turns each weight into 4 bits on the device, which sets the load's
// transient (plan/footprint.cc): bitsandbytes quantizes from the weight's bf16 copy;
// torchao's NF4Tensor.from_tensor compares every element with the 16 NF4 values, a
// [elements, 16] difference and its abs in the weight's dtype, in chunks of 1024^2 elements
// (pytorch/ao 6081796bc, 2024-05-01) or, in torchao 0.1, over the whole tensor at once.
enum class Quantizer { kBitsandbytes, kTorchao, kTorchaoWholeTensor };

struct Workload {
  Method method = Method::kLora;
  int64_t lora_rank = 16;
  std::vector<std::string> lora_targets = {"q", "k", "v", "o", "gate", "up", "down"};
  double lora_dropout = 0.05;          // PEFT examples' usual value; 0 saves the dropout tensors
  DType weight_dtype = DType::kBf16;   // of the frozen or trained base weights
  DType compute_dtype = DType::kBf16;  // activations and (for full) gradients
  bool double_quant = true;            // QLoRA: bnb_4bit_use_double_quant
  bool quantize_lm_head = false;       // QLoRA: Hugging Face keeps lm_head in bf16
  Optimizer optimizer = Optimizer::kAdamW;
  OptimizerStep optimizer_step = OptimizerStep::kForeach;
  bool master_weights = false;  // an fp32 master copy of the trainable parameters
  int64_t batch = 1;
  int64_t seq = 2048;  // sequence or packing length, tokens per sample at the peak step
  bool grad_ckpt = true;
  Attention attention = Attention::kSdpa;
  LossKind loss = LossKind::kStandard;
  WorkloadKind kind = WorkloadKind::kSft;
  double rollout_fraction = 0;  // GRPO: share of the pool the inference engine reserves
  // The stack, and what its profile (plan/framework_profile.h) sets that no flag names.
  Framework framework = Framework::kHf;
  bool offload_checkpoints = false;    // grad-ckpt offload: checkpoints kept in host memory
  bool upcast_unquantized = false;     // 4-bit load: non-quantized params made fp32 (PEFT)
  bool quantize_only_targets = false;  // 4-bit load: only LoRA-wrapped linears (torchtune)
  Quantizer quantizer = Quantizer::kBitsandbytes;  // 4-bit load: the quantizer (torchtune: torchao)
  bool fp32_grads = false;           // gradients in an fp32 buffer (Megatron main_grad)
  bool expandable_segments = false;  // the stack sets expandable_segments:True ...
  int roundup_power2_divisions = 0;  // ... and roundup_power2_divisions (0: not set)
};

Result<Method> ParseMethod(std::string_view s);
Result<DType> ParseDType(std::string_view s);
Result<Optimizer> ParseOptimizer(std::string_view s);
Result<OptimizerStep> ParseOptimizerStep(std::string_view s);
Result<Attention> ParseAttention(std::string_view s);
Result<WorkloadKind> ParseWorkloadKind(std::string_view s);
Result<LossKind> ParseLossKind(std::string_view s);
// "all-linear", "attn", or a comma list of q,k,v,o,gate,up,down (also q_proj, ...).
Result<std::vector<std::string>> ParseLoraTargets(std::string_view s);

std::string_view Name(Method m);
std::string_view Name(DType d);
std::string_view Name(Optimizer o);
std::string_view Name(OptimizerStep s);
std::string_view Name(Attention a);
std::string_view Name(WorkloadKind k);
std::string_view Name(LossKind l);
std::string_view Name(Quantizer q);

// Bytes per element of a dtype as stored, before quantization constants (nf4: 0.5).
double DTypeBytes(DType d);

// The base-weight dtype a method implies when --weight-dtype is not given.
DType DefaultWeightDType(Method m);

bool IsLora(Method m);

}  // namespace headroom
