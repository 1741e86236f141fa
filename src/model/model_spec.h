// ModelSpec: the architecture facts that the footprint needs, whatever they came from (the
// embedded catalog, a Hugging Face config.json, safetensors headers, or --params flags).
//
// Parameter counts are computed from the shapes (ArchitectureParams) so that LoRA can be
// sized per linear layer and quantization per layer kind; when safetensors headers were
// read, their exact count wins (TotalParams) and the stored dtypes are kept.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/message.h"

namespace headroom {

enum class MlpKind {
  kGated,  // SwiGLU / GeGLU: gate_proj, up_proj, down_proj (Llama, Qwen, Mistral, Gemma)
  kPlain,  // GELU MLP: fc1/up, fc2/down (GPT-NeoX, Phi-1.5, BLOOM, Falcon)
};

struct ModelSpec {
  std::string name;    // catalog name, config path, or "custom"
  std::string family;  // model_type as Hugging Face spells it: "llama", "qwen3_moe", ...

  int64_t hidden_size = 0;
  int64_t num_layers = 0;         // decoder layers (encoder + decoder for T5-style models)
  int64_t num_heads = 0;          // attention (query) heads
  int64_t num_kv_heads = 0;       // key/value heads (grouped-query attention); = heads for MHA
  int64_t head_dim = 0;           // usually hidden / heads; Gemma and Qwen3 set it apart
  int64_t intermediate_size = 0;  // dense MLP width
  int64_t vocab_size = 0;
  bool tie_word_embeddings = false;
  MlpKind mlp = MlpKind::kGated;
  bool attention_bias = false;   // q/k/v (and o for GPT-style) carry biases (Qwen2, GPT-NeoX)
  bool mlp_bias = false;         // MLP linears carry biases (GPT-NeoX, Phi-1.5, BLOOM)
  int norms_per_layer = 2;       // RMSNorm/LayerNorm weight vectors per layer (Gemma 2/3: 4)
  bool layer_norm_bias = false;  // LayerNorm (weight + bias) rather than RMSNorm (weight)
  bool qk_norm = false;          // per-head q/k norms (Qwen3, Gemma 3, OLMo 2)

  // Mixture of experts; num_experts == 0 means a dense model.
  int64_t num_experts = 0;
  int64_t experts_per_token = 0;
  int64_t moe_intermediate_size = 0;  // expert MLP width; 0 means intermediate_size
  int64_t num_shared_experts = 0;     // always-on experts (Qwen2-MoE style), same width
  // Layers that stay dense in a MoE model (DeepSeek's first_k_dense); 0 for most.
  int64_t num_dense_layers = 0;

  // Parameters outside the text decoder (a vision tower), from the publisher; 0 if none.
  int64_t extra_params = 0;

  // Catalog entries only: the publisher's own count and where it is stated.
  uint64_t published_params = 0;
  std::string published_source;

  // From safetensors headers, when a model folder was read.
  std::optional<uint64_t> exact_params;                 // sum of tensor element counts
  std::map<std::string, uint64_t> stored_dtype_params;  // "BF16" -> elements
  std::optional<uint64_t> checkpoint_bytes;             // sum of tensor data bytes
};

// One kind of linear layer in a decoder layer, with its real shape.
struct LinearShape {
  std::string name;  // q, k, v, o, gate, up, down (the names --lora-targets uses)
  int64_t in_features = 0;
  int64_t out_features = 0;
  int64_t count = 1;       // how many per layer: num_experts for expert MLPs, else 1
  bool is_expert = false;  // an expert MLP weight (only experts_per_token are active)
};

// The linear layers of one decoder layer (MoE expert MLPs carry count = num_experts;
// shared experts and dense MLPs count 1). For a MoE model with num_dense_layers > 0,
// `dense_layer` asks for the shape of those dense layers instead.
std::vector<LinearShape> LayerLinears(const ModelSpec& spec, bool dense_layer = false);

// Parameter count computed from the architecture: embeddings, lm_head unless tied, every
// layer's linears, biases, norms, MoE routers, plus extra_params.
uint64_t ArchitectureParams(const ModelSpec& spec);

// Parameters inside the decoder layers' linears (what NF4/NVFP4 quantize and LoRA wraps).
uint64_t LinearParams(const ModelSpec& spec);

// Parameters of the input embedding and (untied) output head.
uint64_t EmbeddingParams(const ModelSpec& spec);
uint64_t LmHeadParams(const ModelSpec& spec);  // 0 when tied

// The exact count from safetensors when known, else the architecture's.
uint64_t TotalParams(const ModelSpec& spec);

// Parameters that take part in one token's forward pass (MoE: active experts only).
uint64_t ActiveParams(const ModelSpec& spec);

// Whether the MoE experts are stored as fused 3-D parameters rather than one nn.Linear per
// expert (Hugging Face's gpt-oss). PEFT's module targets, all-linear included, then reach
// only the attention projections; adapting experts needs target_parameters.
bool ExpertsAreFused(const ModelSpec& spec);

// The largest single dimension CompleteAndValidate accepts (2^24): with the whole
// architecture under 10^15 parameters, every uint64 product and sum stays exact.
inline constexpr int64_t kMaxModelDimension = int64_t{1} << 24;

// Fills head_dim, num_kv_heads and moe_intermediate_size from the others when 0, and
// returns an error message naming the first missing or impossible field (empty when valid).
Message CompleteAndValidate(ModelSpec* spec);

}  // namespace headroom
