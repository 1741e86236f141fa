// Implementation notes: the parameter arithmetic follows the Hugging Face modeling code of
// each family. Per decoder layer: q = hidden x heads*head_dim, k and v = hidden x
// kv_heads*head_dim, o = heads*head_dim x hidden; a gated MLP has gate, up (hidden x inter)
// and down (inter x hidden), a plain MLP only up and down. MoE layers replace the MLP with
// num_experts copies of it plus a router (hidden x num_experts). Norm vectors, biases and
// routers are under 0.1 % of any model in the catalog but are counted so that the catalog
// test can hold every entry within 1 % of the published count.
#include "model/model_spec.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/message.h"

namespace headroom {
namespace {

uint64_t U(int64_t v) { return v > 0 ? static_cast<uint64_t>(v) : 0; }

bool IsMoe(const ModelSpec& s) { return s.num_experts > 0; }

// attention_bias means q, k and v biases; o_proj carries one too except in the families
// whose Hugging Face attention builds o_proj with bias=False (Qwen2Attention,
// StableLmAttention). Without this Qwen2.5-0.5B would count 24 x 896 too many.
bool OutputProjHasBias(const ModelSpec& s) {
  for (const char* family : {"qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl", "stablelm"}) {
    if (s.family == family) return false;
  }
  return true;
}

void AddMlp(const ModelSpec& s, int64_t width, int64_t count, bool is_expert,
            std::vector<LinearShape>* out) {
  if (s.mlp == MlpKind::kGated) out->push_back({"gate", s.hidden_size, width, count, is_expert});
  out->push_back({"up", s.hidden_size, width, count, is_expert});
  out->push_back({"down", width, s.hidden_size, count, is_expert});
}

// Biases, norms and routers of one layer: the parameters LayerLinears does not list.
uint64_t LayerSmallParams(const ModelSpec& s, bool dense_layer) {
  uint64_t n = 0;
  const uint64_t q_out = U(s.num_heads * s.head_dim);
  const uint64_t kv_out = U(s.num_kv_heads * s.head_dim);
  if (s.attention_bias) n += q_out + 2 * kv_out + (OutputProjHasBias(s) ? U(s.hidden_size) : 0);
  const uint64_t norm = U(s.hidden_size) * (s.layer_norm_bias ? 2 : 1);
  n += static_cast<uint64_t>(s.norms_per_layer) * norm;
  if (s.qk_norm) n += 2 * U(s.head_dim);
  const bool moe_layer = IsMoe(s) && !dense_layer;
  if (moe_layer) n += U(s.hidden_size) * U(s.num_experts);  // router
  if (s.mlp_bias) {
    const int64_t width = moe_layer ? s.moe_intermediate_size : s.intermediate_size;
    const uint64_t copies = moe_layer ? U(s.num_experts) : 1;
    const uint64_t per = (s.mlp == MlpKind::kGated ? 2 : 1) * U(width) + U(s.hidden_size);
    n += copies * per;
  }
  return n;
}

uint64_t SumLinears(const std::vector<LinearShape>& linears, bool active_only,
                    int64_t experts_per_token) {
  uint64_t n = 0;
  for (const auto& l : linears) {
    const int64_t count = (active_only && l.is_expert) ? experts_per_token : l.count;
    n += U(l.in_features) * U(l.out_features) * U(count);
  }
  return n;
}

uint64_t AllLayersLinears(const ModelSpec& s, bool active_only) {
  const int64_t dense = IsMoe(s) ? s.num_dense_layers : s.num_layers;
  const int64_t moe = s.num_layers - dense;
  return U(dense) * SumLinears(LayerLinears(s, true), active_only, s.experts_per_token) +
         U(moe) * SumLinears(LayerLinears(s, false), active_only, s.experts_per_token);
}

uint64_t AllLayersSmall(const ModelSpec& s) {
  const int64_t dense = IsMoe(s) ? s.num_dense_layers : s.num_layers;
  const int64_t moe = s.num_layers - dense;
  return U(dense) * LayerSmallParams(s, true) + U(moe) * LayerSmallParams(s, false);
}

}  // namespace

std::vector<LinearShape> LayerLinears(const ModelSpec& s, bool dense_layer) {
  std::vector<LinearShape> out;
  out.push_back({"q", s.hidden_size, s.num_heads * s.head_dim, 1, false});
  out.push_back({"k", s.hidden_size, s.num_kv_heads * s.head_dim, 1, false});
  out.push_back({"v", s.hidden_size, s.num_kv_heads * s.head_dim, 1, false});
  out.push_back({"o", s.num_heads * s.head_dim, s.hidden_size, 1, false});
  if (IsMoe(s) && !dense_layer) {
    AddMlp(s, s.moe_intermediate_size, s.num_experts, true, &out);
    if (s.num_shared_experts > 0)
      AddMlp(s, s.moe_intermediate_size, s.num_shared_experts, false, &out);
  } else {
    AddMlp(s, s.intermediate_size, 1, false, &out);
  }
  return out;
}

bool ExpertsAreFused(const ModelSpec& s) { return s.num_experts > 0 && s.family == "gpt_oss"; }

uint64_t EmbeddingParams(const ModelSpec& s) { return U(s.vocab_size) * U(s.hidden_size); }

uint64_t LmHeadParams(const ModelSpec& s) {
  return s.tie_word_embeddings ? 0 : U(s.vocab_size) * U(s.hidden_size);
}

uint64_t LinearParams(const ModelSpec& s) { return AllLayersLinears(s, false); }

uint64_t ArchitectureParams(const ModelSpec& s) {
  const uint64_t final_norm = U(s.hidden_size) * (s.layer_norm_bias ? 2 : 1);
  return EmbeddingParams(s) + LmHeadParams(s) + AllLayersLinears(s, false) + AllLayersSmall(s) +
         final_norm + U(s.extra_params);
}

uint64_t TotalParams(const ModelSpec& s) { return s.exact_params.value_or(ArchitectureParams(s)); }

uint64_t ActiveParams(const ModelSpec& s) {
  if (!IsMoe(s)) return TotalParams(s);
  return EmbeddingParams(s) + LmHeadParams(s) + AllLayersLinears(s, true) + AllLayersSmall(s);
}

Message CompleteAndValidate(ModelSpec* s) {
  auto positive = [](int64_t v) { return v > 0; };
  if (!positive(s->hidden_size)) return Msg("hidden_size must be positive");
  if (!positive(s->num_layers)) return Msg("num_hidden_layers must be positive");
  if (!positive(s->num_heads)) return Msg("num_attention_heads must be positive");
  if (!positive(s->vocab_size)) return Msg("vocab_size must be positive");
  if (!positive(s->intermediate_size) && !positive(s->moe_intermediate_size)) {
    return Msg("intermediate_size must be positive");
  }
  if (s->num_kv_heads == 0) s->num_kv_heads = s->num_heads;
  if (s->num_kv_heads < 0) return Msg("num_key_value_heads must be positive");
  if (s->num_kv_heads > s->num_heads)
    return Msg("num_key_value_heads is larger than num_attention_heads");
  if (s->head_dim == 0) {
    if (s->hidden_size % s->num_heads != 0) {
      return Msg("hidden_size is not a multiple of num_attention_heads and head_dim is not given");
    }
    s->head_dim = s->hidden_size / s->num_heads;
  }
  if (s->head_dim < 0) return Msg("head_dim must be positive");
  if (s->num_experts < 0 || s->experts_per_token < 0 || s->num_shared_experts < 0) {
    return Msg("expert counts must not be negative");
  }
  if (s->num_experts > 0) {
    if (s->experts_per_token <= 0)
      return Msg("num_experts_per_tok must be positive for a MoE model");
    if (s->experts_per_token > s->num_experts)
      return Msg("num_experts_per_tok is larger than num_experts");
    if (s->moe_intermediate_size == 0) s->moe_intermediate_size = s->intermediate_size;
    if (s->num_dense_layers < 0 || s->num_dense_layers > s->num_layers) {
      return Msg("the count of dense layers is outside 0..num_hidden_layers");
    }
  }
  if (s->num_dense_layers < 0 || s->extra_params < 0)
    return Msg("layer and parameter counts must not be negative");
  // Guard the arithmetic: no single dimension past 2^24, and the whole architecture, summed
  // in long double before any 64-bit product is formed, under 10^15 parameters (a thousand
  // times the largest published model). Both keep every uint64 sum exact.
  for (int64_t v :
       {s->hidden_size, s->num_layers, s->num_heads, s->num_kv_heads, s->head_dim,
        s->intermediate_size, s->moe_intermediate_size, s->num_experts, s->num_shared_experts}) {
    if (v > kMaxModelDimension) return Msg("a dimension ({}) is absurdly large", v);
  }
  if (s->vocab_size > (int64_t{1} << 26)) return Msg("vocab_size is absurdly large");
  using LD = long double;
  const LD h = s->hidden_size, q = LD(s->num_heads) * LD(s->head_dim);
  const LD kv = LD(s->num_kv_heads) * LD(s->head_dim);
  const LD mlp_copies = s->num_experts > 0 ? LD(s->num_experts + s->num_shared_experts) : 1;
  const LD width = std::max(s->intermediate_size, s->moe_intermediate_size);
  const LD per_layer = h * (2 * q + 2 * kv) + mlp_copies * 3 * h * width;
  const LD total = LD(s->num_layers) * per_layer + 2 * LD(s->vocab_size) * h + LD(s->extra_params);
  if (total > 1e15L) return Msg("the architecture adds up to more than 10^15 parameters");
  return {};
}

}  // namespace headroom
