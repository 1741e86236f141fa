// The profile table. Each entry's choices come from the stack's public source; the file
// is named beside each one here and in docs/plan-frameworks.md (one table). Nothing here was
// fitted to measured rows: a choice is what the code does by default.
#include "plan/framework_profile.h"

#include <array>
#include <string>
#include <utility>

#include "base/message.h"
#include "base/text.h"
#include "plan/plan_fields.h"

namespace headroom {
namespace {

constexpr std::array<FrameworkProfile, 9> kProfiles{{
    // Transformers Trainer + PEFT. transformers src/transformers/training_args.py: optim
    // defaults to adamw_torch_fused on torch >= 2.8 (adamw_torch before); the loss is the
    // model's own (src/transformers/loss/loss_utils.py ForCausalLMLoss: logits.float()).
    // PEFT src/peft/tuners/lora/config.py: lora_dropout 0.0, but PEFT's and the QLoRA
    // examples use 0.05; a plain script does not call prepare_model_for_kbit_training.
    {.framework = Framework::kHf,
     .name = "hf",
     .stack = "Transformers Trainer + PEFT",
     .optimizer_step = OptimizerStep::kFused},
    // TRL SFTTrainer: trl/trainer/sft_trainer.py calls peft's prepare_model_for_kbit_training
    // on a 4-bit model that is not sharded (is_qlora and not is_sharded_qlora), which casts
    // every fp16/bf16 parameter, embeddings and lm_head included, to fp32 (peft
    // src/peft/utils/other.py); trl/trainer/sft_config.py turns gradient checkpointing on.
    {.framework = Framework::kTrl,
     .name = "trl",
     .stack = "TRL SFTTrainer / DPOTrainer / GRPOTrainer on Transformers + PEFT",
     .optimizer_step = OptimizerStep::kFused,
     .upcast_unquantized = true},
    // Unsloth: unsloth/models/llama.py get_peft_model defaults use_gradient_checkpointing=
    // "unsloth" (unsloth_zoo/gradient_checkpointing.py Unsloth_Offloaded_Gradient_Checkpointer:
    // each layer's input copied to the host, non_blocking) and lora_dropout=0; the loss is
    // fused with lm_head and never materialises the logits whole (unsloth_zoo/loss_utils.py,
    // unsloth/kernels/cross_entropy_loss.py); its notebooks train with optim="adamw_8bit";
    // unsloth/__init__.py sets PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,
    // roundup_power2_divisions:[32:256,64:128,256:64,>:32] (32 above 256 MB). The 4-bit
    // checkpoints (unsloth/*-bnb-4bit) keep lm_head and embeddings in bf16.
    {.framework = Framework::kUnsloth,
     .name = "unsloth",
     .stack = "Unsloth FastLanguageModel + TRL",
     .loss = LossKind::kFused,
     .offload_checkpoints = true,
     .optimizer = Optimizer::kAdamW8bit,
     .optimizer_step = OptimizerStep::kFused,
     .lora_dropout = 0,
     .expandable_segments = true,
     .roundup_power2_divisions = 32},
    // axolotl: src/axolotl/loaders/model.py prepares a 4-bit model with peft's
    // prepare_model_for_kbit_training (fp32 upcast of the rest); HF Trainer underneath, so
    // the Trainer's optimizer default; its examples (examples/llama-3/qlora.yml) set
    // gradient_checkpointing: true and lora_dropout 0.05; src/axolotl/utils/__init__.py
    // set_pytorch_cuda_alloc_conf sets expandable_segments:True,roundup_power2_divisions:16.
    {.framework = Framework::kAxolotl,
     .name = "axolotl",
     .stack = "Transformers Trainer + PEFT, set up by axolotl",
     .optimizer_step = OptimizerStep::kFused,
     .upcast_unquantized = true,
     .expandable_segments = true,
     .roundup_power2_divisions = 16},
    // torchtune: recipes/configs/*/*_lora_single_device.yaml use
    // torchtune.modules.loss.CEWithChunkedOutputLoss, torch.optim.AdamW with fused: True,
    // enable_activation_checkpointing: True and lora_dropout: 0.0; QLoRA quantizes only the
    // LoRA-wrapped linears (torchtune/modules/peft/lora.py LoRALinear quantize_base, NF4 from
    // torchao); the output projection stays bf16. recipes/lora_finetune_single_device.py
    // _setup_model builds the model on the device (`with self._device`) and load_state_dict
    // copies each CPU tensor into its NF4 parameter: torchao's NF4Tensor copy_ moves it to the
    // device and quantizes it there (torchao/quantization/quantize_/workflows/nf4/nf4_tensor.py,
    // from_tensor in chunks of 1024^2 elements).
    {.framework = Framework::kTorchtune,
     .name = "torchtune",
     .stack = "torchtune recipes",
     .loss = LossKind::kChunked,
     .optimizer_step = OptimizerStep::kFused,
     .lora_dropout = 0,
     .quantize_only_targets = true,
     .quantizer = Quantizer::kTorchao},
    // LLaMA-Factory: HF Trainer (src/llamafactory/train/sft/trainer.py); gradient
    // checkpointing on unless disable_gradient_checkpointing
    // (src/llamafactory/model/model_utils/checkpointing.py); no
    // prepare_model_for_kbit_training, layer norms upcast only with upcast_layernorm;
    // lora_dropout defaults to 0 (src/llamafactory/hparams/finetuning_args.py).
    {.framework = Framework::kLlamaFactory,
     .name = "llama-factory",
     .stack = "Transformers Trainer + PEFT, set up by LLaMA-Factory",
     .optimizer_step = OptimizerStep::kFused,
     .lora_dropout = 0},
    // LitGPT: litgpt/finetune/lora.py computes logits in chunks of 128 tokens and the loss by
    // chunked_cross_entropy (litgpt/utils.py); no activation checkpointing on one device;
    // torch.optim.AdamW (foreach by default); QLoRA through Lightning's BitsandbytesPrecision
    // converts every nn.Linear, lm_head included, to 4 bits.
    {.framework = Framework::kLitgpt,
     .name = "litgpt",
     .stack = "LitGPT (Lightning Fabric)",
     .loss = LossKind::kChunked,
     .grad_ckpt = false,
     .quantize_lm_head = true},
    // Megatron-Core / NeMo: megatron/core/optimizer/__init__.py builds a mixed-precision
    // optimizer with fp32 master parameters and fp32 Adam states (optimizer.py
    // Float16OptimizerWithFloat16Params) around a fused Adam (Transformer Engine / Apex);
    // megatron/training/arguments.py makes bf16 accumulate gradients in fp32 (main_grad
    // buffers, megatron/core/distributed/param_and_grad_buffer.py); recompute is off unless
    // --recompute-granularity is given.
    {.framework = Framework::kMegatron,
     .name = "megatron",
     .stack = "NeMo / Megatron-Core",
     .grad_ckpt = false,
     .optimizer_step = OptimizerStep::kFused,
     .master_weights = true,
     .fp32_grads = true},
    // A plain PyTorch loop: torch/optim/adamw.py picks the foreach implementation on CUDA
    // when neither foreach nor fused is given; the loss is F.cross_entropy on fp32 logits.
    {.framework = Framework::kPytorch, .name = "pytorch", .stack = "a plain PyTorch loop"},
}};

constexpr std::array<std::pair<std::string_view, Framework>, 14> kFrameworkNames{{
    {"hf", Framework::kHf},
    {"trl", Framework::kTrl},
    {"unsloth", Framework::kUnsloth},
    {"axolotl", Framework::kAxolotl},
    {"torchtune", Framework::kTorchtune},
    {"llama-factory", Framework::kLlamaFactory},
    {"litgpt", Framework::kLitgpt},
    {"megatron", Framework::kMegatron},
    {"pytorch", Framework::kPytorch},
    {"llamafactory", Framework::kLlamaFactory},
    {"llama_factory", Framework::kLlamaFactory},
    {"lit-gpt", Framework::kLitgpt},
    {"nemo", Framework::kMegatron},
    {"megatron-core", Framework::kMegatron},
}};

}  // namespace

Result<Framework> ParseFramework(std::string_view s) {
  const std::string key = AsciiLower(s);
  for (const auto& [name, f] : kFrameworkNames) {
    if (name == key) return f;
  }
  // TRANSLATORS: {0} is the name given, {1} the accepted names separated by '|'.
  return Error{Msg("unknown framework '{0}' (expected {1})", s, ParseableFrameworkNames())};
}

std::string_view Name(Framework f) { return ProfileOf(f).name; }

std::span<const FrameworkProfile> FrameworkProfiles() { return kProfiles; }

const FrameworkProfile& ProfileOf(Framework f) {
  for (const auto& p : kProfiles) {
    if (p.framework == f) return p;
  }
  return kProfiles[0];
}

std::string ParseableFrameworkNames() {
  std::string names;
  for (const auto& p : kProfiles) names += (names.empty() ? "" : "|") + std::string(p.name);
  return names;
}

Result<Framework> ApplyFrameworkDefaults(PlanFlagText* text) {
  Framework f = Framework::kHf;
  if (!text->framework.empty()) {
    auto parsed = ParseFramework(text->framework);
    if (!parsed) return parsed;
    f = *parsed;
  }
  // The fields the profile fills (plan/plan_fields' table, LayerPlanText's profile layer).
  *text = LayerPlanText({*text, GivenFields(*text)}).text;
  return f;
}

void ApplyProfileMechanisms(Workload* w, bool lora_dropout_given) {
  const FrameworkProfile& p = ProfileOf(w->framework);
  if (!lora_dropout_given) w->lora_dropout = p.lora_dropout;
  w->master_weights = w->master_weights || p.master_weights;
  w->upcast_unquantized = p.upcast_unquantized;
  w->quantize_lm_head = p.quantize_lm_head;
  w->quantize_only_targets = p.quantize_only_targets;
  w->quantizer = p.quantizer;
  w->fp32_grads = p.fp32_grads;
  w->expandable_segments = p.expandable_segments;
  w->roundup_power2_divisions = p.roundup_power2_divisions;
}

Workload ProfileWorkload(Framework f) {
  PlanFlagText text;
  text.framework = std::string(Name(f));
  Workload w;
  w.framework = f;
  if (ApplyFrameworkDefaults(&text)) {
    if (auto o = ParseOptimizer(text.optimizer)) w.optimizer = *o;
    if (auto s = ParseOptimizerStep(text.optimizer_step)) w.optimizer_step = *s;
    if (auto l = ParseLossKind(text.loss)) w.loss = *l;
  }
  const FrameworkProfile& p = ProfileOf(f);
  w.grad_ckpt = p.grad_ckpt;
  w.offload_checkpoints = p.grad_ckpt && p.offload_checkpoints;
  ApplyProfileMechanisms(&w, false);
  return w;
}

}  // namespace headroom
