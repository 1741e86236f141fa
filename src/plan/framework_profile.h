// Framework profiles: what each training stack does, by default, to the terms of a plan
// (docs/plan-frameworks.md has the table with the source file of every choice).
//
// A profile is data: how the loss meets the logits, where gradient checkpoints are kept
// (on the device, or offloaded to the host), which layers a 4-bit load quantizes and in what
// dtype the rest stays, the default optimizer and how its step runs, the gradient dtype,
// the LoRA dropout, the allocator settings it sets. A plan's flags override it: a flag's text
// left empty ("") is "from the profile" (ApplyFrameworkDefaults).
#pragma once

#include <span>
#include <string_view>

#include "plan/framework.h"
#include "plan/workload.h"

namespace headroom {

struct PlanFlagText;

struct FrameworkProfile {
  Framework framework = Framework::kHf;
  std::string_view name;   // the canonical --framework spelling
  std::string_view stack;  // what it is, in a few words (English; docs and --json)
  // Defaults a flag overrides.
  LossKind loss = LossKind::kStandard;
  bool grad_ckpt = true;             // checkpointing on in the stack's recipes
  bool offload_checkpoints = false;  // checkpoints kept in host memory (Unsloth "unsloth")
  Optimizer optimizer = Optimizer::kAdamW;
  OptimizerStep optimizer_step = OptimizerStep::kForeach;
  bool master_weights = false;  // fp32 master copy and fp32 states
  double lora_dropout = 0.05;
  // Mechanisms no flag names (the profile is the only way to choose them).
  bool upcast_unquantized = false;     // 4-bit load: every non-quantized param made fp32
  bool quantize_lm_head = false;       // 4-bit load quantizes lm_head too
  bool quantize_only_targets = false;  // 4-bit load quantizes only the LoRA-wrapped linears
  Quantizer quantizer = Quantizer::kBitsandbytes;  // what quantizes them, on the device
  bool fp32_grads = false;                         // gradients accumulated in an fp32 buffer
  // PYTORCH_CUDA_ALLOC_CONF it sets: expandable_segments:True and roundup_power2_divisions
  // (0 = not set). With both, the allocator's slack is the rounding of each block.
  bool expandable_segments = false;
  int roundup_power2_divisions = 0;
};

// Every profile, in --framework's order (hf first).
std::span<const FrameworkProfile> FrameworkProfiles();
const FrameworkProfile& ProfileOf(Framework f);

// "hf|trl|unsloth|...": the names, for usage lines.
std::string ParseableFrameworkNames();

// The workload a profile gives when no flag overrides it (method lora, the planner's batch
// and sequence defaults).
Workload ProfileWorkload(Framework f);

// The flags' text with every field the profile fills (plan/plan_fields' table: optimizer,
// optimizer_step, loss, grad_ckpt, master_weights, and lora_dropout with a LoRA method) and
// the flags left empty ("") set to the profile's value, and the framework parsed from
// `text.framework` ("" = hf). The profile-only mechanisms are applied by
// ApplyProfileMechanisms. On an unknown name, an
// error naming --framework and listing the names.
Result<Framework> ApplyFrameworkDefaults(PlanFlagText* text);

// Sets the mechanisms no flag names (upcast, quantized layers, gradient dtype, allocator)
// on `w` from `w->framework`'s profile, and its LoRA dropout unless `lora_dropout_given`
// and its master weights (added to an explicit --master-weights, which cannot be unset).
void ApplyProfileMechanisms(Workload* w, bool lora_dropout_given);

}  // namespace headroom
