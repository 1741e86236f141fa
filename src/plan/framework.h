// The training stack a plan is for (`plan --framework NAME`). Its profile, what the stack does
// to each term by default, is plan/framework_profile.h; this header is only the name, so that
// Workload can carry it.
#pragma once

#include <string_view>

#include "base/result.h"

namespace headroom {

// hf: Transformers Trainer + PEFT (the default); megatron: NeMo / Megatron-Core; pytorch: a
// plain training loop.
enum class Framework {
  kHf,
  kTrl,
  kUnsloth,
  kAxolotl,
  kTorchtune,
  kLlamaFactory,
  kLitgpt,
  kMegatron,
  kPytorch
};

// "hf", "trl", "unsloth", "axolotl", "torchtune", "llama-factory" (also llamafactory,
// llama_factory), "litgpt" (also lit-gpt), "megatron" (also nemo, megatron-core), "pytorch";
// case-insensitive. The error lists the names.
Result<Framework> ParseFramework(std::string_view s);
std::string_view Name(Framework f);

}  // namespace headroom
