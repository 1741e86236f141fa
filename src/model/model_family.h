// Model families: which catalog models are the same model at another size, for plan's advice
// "a smaller model" (docs/plan.md, "Advice").
//
// ModelSpec::family is the Hugging Face model_type, the architecture's code path: it puts
// Llama 2, Llama 3, TinyLlama and SmolLM2 together ("llama"), so it cannot say what a user
// of Llama 3.1 8B would move to. A family here is one publisher's generation: one tokenizer,
// one training recipe, published at several sizes (Llama 3, 3.1, 3.2 and 3.3 share the
// 128256-token vocabulary and the recipe; Llama 2 and TinyLlama do not). Dense and
// mixture-of-experts models of one generation (Qwen3-8B, Qwen3-30B-A3B) are two families.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/model_spec.h"

namespace headroom {

// The family of a model by its name (a catalog name or anything NormalizeModelName takes:
// "meta-llama/Llama-3.1-8B" is in "llama-3"), with "-moe" appended for a
// mixture-of-experts spec; empty when no rule names it (a --config or --params model).
std::string ModelFamily(const ModelSpec& spec);

// The catalog models of spec's family with fewer parameters, largest first (one size down
// first); empty when the family has no smaller member or spec has no family.
std::vector<const ModelSpec*> SmallerInFamily(const ModelSpec& spec);

}  // namespace headroom
