// The embedded model catalog: architecture facts of common open decoder models, copied from
// their Hugging Face config.json files, so that `plan --model llama-3.1-8b` works offline.
//
// Names are canonical: lower case, '-' between words, dots kept in version numbers
// ("llama-3.1-70b", "qwen2.5-7b", "phi-3.5-moe"). Lookups normalise what the user typed the
// same way, so "meta-llama/Llama-3.1-70B-Instruct" finds "llama-3.1-70b".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "model/model_spec.h"

namespace headroom {

// All catalog entries, each already through CompleteAndValidate, in a stable order: grouped
// by family (Hugging Face model_type), then by series and size.
const std::vector<ModelSpec>& Catalog();

// The canonical form of a user-typed model name: drops an "org/" prefix, lower-cases, turns
// '_' and ' ' into '-', and strips variant suffixes that do not change the architecture
// (-instruct, -it, -chat, -base, -hf, -bf16, -4k, -v0.3, -2407, ...), repeatedly.
std::string NormalizeModelName(std::string_view name);

// The catalog entry for a user-typed name, or nullptr when there is none.
const ModelSpec* FindModel(std::string_view name);

// The n catalog names closest to `name` by edit distance between normalised names, nearest
// first (ties in name order), for "unknown model, did you mean ...".
std::vector<std::string> ClosestModelNames(std::string_view name, size_t n = 3);

}  // namespace headroom
