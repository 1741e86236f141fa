// Implementation notes: the families are one table of name prefixes, each the series a
// publisher released at several sizes, read from the catalog's own rows (model/catalog.cc).
// The longest prefix wins; model_family_test holds every catalog row to a family, so a new
// row without one fails there.
#include "model/model_family.h"

#include <algorithm>
#include <string>
#include <utility>

#include "model/catalog.h"

namespace headroom {
namespace {

struct FamilyRule {
  std::string_view prefix;  // of the normalised name
  std::string_view family;
};

constexpr FamilyRule kFamilyRules[] = {
    {"llama-2-", "llama-2"},
    // Llama 3, 3.1, 3.2 and 3.3: one tokenizer (128256) and recipe, 1B to 405B.
    {"llama-3-", "llama-3"},
    {"llama-3.", "llama-3"},
    {"tinyllama", "tinyllama"},
    {"smollm2-", "smollm2"},
    {"qwen2.5-", "qwen2.5"},
    {"qwen3-", "qwen3"},
    {"mistral-7b", "mistral-7b"},
    // Mistral NeMo and Small 3: the Tekken tokenizer (131072), head_dim 128.
    {"mistral-nemo", "mistral-tekken"},
    {"mistral-small", "mistral-tekken"},
    {"mixtral-", "mixtral"},
    {"gemma-2b", "gemma"},
    {"gemma-7b", "gemma"},
    {"gemma-2-", "gemma-2"},
    // Gemma 3 1B is text only; a text fine-tune of the larger ones can move to it.
    {"gemma-3-", "gemma-3"},
    {"phi-1.5", "phi-1.5"},
    {"phi-2", "phi-2"},
    {"phi-3-", "phi-3"},
    {"phi-3.5-", "phi-3"},
    {"phi-4", "phi-4"},
    {"gpt-oss-", "gpt-oss"},
    {"falcon-", "falcon"},
    {"bloomz-", "bloomz"},
    {"stablelm-", "stablelm"},
};

size_t CommonPrefix(std::string_view a, std::string_view b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

}  // namespace

std::string ModelFamily(const ModelSpec& spec) {
  const std::string name = NormalizeModelName(spec.name);
  const FamilyRule* best = nullptr;
  for (const FamilyRule& rule : kFamilyRules) {
    if (!name.starts_with(rule.prefix)) continue;
    if (!best || rule.prefix.size() > best->prefix.size()) best = &rule;
  }
  if (!best) return {};
  std::string family(best->family);
  if (spec.num_experts > 0) family += "-moe";
  return family;
}

std::vector<const ModelSpec*> SmallerInFamily(const ModelSpec& spec) {
  std::vector<const ModelSpec*> out;
  const std::string family = ModelFamily(spec);
  if (family.empty()) return out;
  const uint64_t params = TotalParams(spec);
  for (const ModelSpec& m : Catalog()) {
    if (TotalParams(m) < params && ModelFamily(m) == family) out.push_back(&m);
  }
  // Largest first; of two the same size (Llama 3 8B and 3.1 8B), the one whose name shares
  // more with spec's (its own series).
  const std::string name = NormalizeModelName(spec.name);
  std::stable_sort(out.begin(), out.end(), [&](const ModelSpec* a, const ModelSpec* b) {
    if (TotalParams(*a) != TotalParams(*b)) return TotalParams(*a) > TotalParams(*b);
    return CommonPrefix(a->name, name) > CommonPrefix(b->name, name);
  });
  return out;
}

}  // namespace headroom
