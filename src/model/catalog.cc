// Implementation notes: the catalog is a constexpr table of Rows, one per model, each copied
// from the Hugging Face config.json of the repository named in its comment; Catalog() turns
// them into ModelSpecs once and runs CompleteAndValidate on each. Fields left out take the
// config defaults: head_dim = hidden / heads, kv_heads = heads, untied embeddings, gated MLP,
// no biases, two RMSNorms per layer.
//
// published_params is the publisher's own count. Unless a row says otherwise it is the
// "safetensors total" the Hugging Face Hub shows for the repository (the sum of the stored
// tensors' element counts). Where a checkpoint stores a copy of an lm_head that the model
// ties to its embeddings (Qwen3-0.6B/1.7B, Falcon-7B), the Hub total counts that matrix
// twice, so the row quotes a count without the copy and says where it comes from.
// catalog_test holds every row within 1 % of its published count.
//
// Rows are not ModelSpecs because g++ 12 warns (-Wmissing-field-initializers) about any
// member without a default initializer left out of a designated initializer, and
// ModelSpec's strings and optionals have none.
#include "model/catalog.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "base/message.h"
#include "base/text.h"

namespace headroom {
namespace {

struct Row {
  std::string_view name{};
  std::string_view family{};  // model_type in config.json
  int64_t hidden_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;  // 0: same as num_heads
  int64_t head_dim = 0;      // 0: hidden_size / num_heads
  int64_t intermediate_size = 0;
  int64_t vocab_size = 0;
  bool tie_word_embeddings = false;
  MlpKind mlp = MlpKind::kGated;
  bool attention_bias = false;
  bool mlp_bias = false;
  int norms_per_layer = 2;
  bool layer_norm_bias = false;
  bool qk_norm = false;
  int64_t num_experts = 0;
  int64_t experts_per_token = 0;
  int64_t moe_intermediate_size = 0;
  int64_t extra_params = 0;
  uint64_t published_params = 0;
  std::string_view published_source{};
};

// Gemma 3 4B/12B/27B are image-text models whose published counts include the SigLIP
// vision tower and the projector into the text model; neither is in the text config.
// Tower (siglip so400m, 896 px, patch 14, width 1152, MLP 4304, 27 layers, all linears and
// LayerNorms biased): patch conv 3*14*14*1152 + 1152, 4096 position embeddings, 27 layers,
// post-LayerNorm. Projector: mm_input_projection_weight 1152 x text hidden, plus the
// 1152-wide mm_soft_emb_norm. With these the totals match the Hub counts to the parameter.
constexpr int64_t kSiglipWidth = 1152;
constexpr int64_t kSiglipMlp = 4304;
constexpr int64_t kSiglipLayer = 4 * (kSiglipWidth * kSiglipWidth + kSiglipWidth) +
                                 2 * kSiglipWidth * kSiglipMlp + kSiglipMlp + kSiglipWidth +
                                 4 * kSiglipWidth;
constexpr int64_t kSiglipTower = (3 * 14 * 14 * kSiglipWidth + kSiglipWidth) + 4096 * kSiglipWidth +
                                 27 * kSiglipLayer + 2 * kSiglipWidth;
static_assert(kSiglipTower == 416'866'032);
constexpr int64_t Gemma3VisionParams(int64_t text_hidden) {
  return kSiglipTower + kSiglipWidth * text_hidden + kSiglipWidth;
}

constexpr MlpKind kPlain = MlpKind::kPlain;

// Sorted by family, then series and size. Source of every shape: the config.json of the
// repository in the comment (base model; the -Instruct/-it variants share the shapes).
// One model per block reads better than clang-format's one field per line.
// clang-format off
constexpr Row kRows[] = {
    // llama: meta-llama/Llama-2-{7b,13b,70b}-hf
    {.name = "llama-2-7b", .family = "llama", .hidden_size = 4096, .num_layers = 32,
     .num_heads = 32, .intermediate_size = 11008, .vocab_size = 32000,
     .published_params = 6'738'415'616, .published_source = "HF safetensors total, 6.74B"},
    {.name = "llama-2-13b", .family = "llama", .hidden_size = 5120, .num_layers = 40,
     .num_heads = 40, .intermediate_size = 13824, .vocab_size = 32000,
     .published_params = 13'015'864'320, .published_source = "HF safetensors total, 13.0B"},
    {.name = "llama-2-70b", .family = "llama", .hidden_size = 8192, .num_layers = 80,
     .num_heads = 64, .num_kv_heads = 8, .intermediate_size = 28672, .vocab_size = 32000,
     .published_params = 68'976'648'192, .published_source = "HF safetensors total, 69.0B"},
    // meta-llama/Meta-Llama-3-{8B,70B}
    {.name = "llama-3-8b", .family = "llama", .hidden_size = 4096, .num_layers = 32,
     .num_heads = 32, .num_kv_heads = 8, .intermediate_size = 14336, .vocab_size = 128256,
     .published_params = 8'030'261'248, .published_source = "HF safetensors total, 8.03B"},
    {.name = "llama-3-70b", .family = "llama", .hidden_size = 8192, .num_layers = 80,
     .num_heads = 64, .num_kv_heads = 8, .intermediate_size = 28672, .vocab_size = 128256,
     .published_params = 70'553'706'496, .published_source = "HF safetensors total, 70.6B"},
    // meta-llama/Llama-3.1-{8B,70B,405B}
    {.name = "llama-3.1-8b", .family = "llama", .hidden_size = 4096, .num_layers = 32,
     .num_heads = 32, .num_kv_heads = 8, .intermediate_size = 14336, .vocab_size = 128256,
     .published_params = 8'030'261'248,
     .published_source = "HF model card meta-llama/Llama-3.1-8B: 8.03B (safetensors total)"},
    {.name = "llama-3.1-70b", .family = "llama", .hidden_size = 8192, .num_layers = 80,
     .num_heads = 64, .num_kv_heads = 8, .intermediate_size = 28672, .vocab_size = 128256,
     .published_params = 70'553'706'496, .published_source = "HF safetensors total, 70.6B"},
    {.name = "llama-3.1-405b", .family = "llama", .hidden_size = 16384, .num_layers = 126,
     .num_heads = 128, .num_kv_heads = 8, .intermediate_size = 53248, .vocab_size = 128256,
     .published_params = 405'853'388'800, .published_source = "HF safetensors total, 406B"},
    // meta-llama/Llama-3.2-{1B,3B}: tied embeddings, head_dim given explicitly.
    {.name = "llama-3.2-1b", .family = "llama", .hidden_size = 2048, .num_layers = 16,
     .num_heads = 32, .num_kv_heads = 8, .head_dim = 64, .intermediate_size = 8192,
     .vocab_size = 128256, .tie_word_embeddings = true, .published_params = 1'235'814'400,
     .published_source = "HF safetensors total, 1.24B"},
    {.name = "llama-3.2-3b", .family = "llama", .hidden_size = 3072, .num_layers = 28,
     .num_heads = 24, .num_kv_heads = 8, .head_dim = 128, .intermediate_size = 8192,
     .vocab_size = 128256, .tie_word_embeddings = true, .published_params = 3'212'749'824,
     .published_source = "HF safetensors total, 3.21B"},
    // meta-llama/Llama-3.3-70B-Instruct (same shapes as 3.1-70B)
    {.name = "llama-3.3-70b", .family = "llama", .hidden_size = 8192, .num_layers = 80,
     .num_heads = 64, .num_kv_heads = 8, .intermediate_size = 28672, .vocab_size = 128256,
     .published_params = 70'553'706'496, .published_source = "HF safetensors total, 70.6B"},
    // HuggingFaceTB/SmolLM2-{135M,360M,1.7B} (LlamaForCausalLM, tied)
    {.name = "smollm2-135m", .family = "llama", .hidden_size = 576, .num_layers = 30,
     .num_heads = 9, .num_kv_heads = 3, .intermediate_size = 1536, .vocab_size = 49152,
     .tie_word_embeddings = true, .published_params = 134'515'008,
     .published_source = "HF safetensors total, 135M"},
    {.name = "smollm2-360m", .family = "llama", .hidden_size = 960, .num_layers = 32,
     .num_heads = 15, .num_kv_heads = 5, .intermediate_size = 2560, .vocab_size = 49152,
     .tie_word_embeddings = true, .published_params = 361'821'120,
     .published_source = "HF safetensors total, 362M"},
    {.name = "smollm2-1.7b", .family = "llama", .hidden_size = 2048, .num_layers = 24,
     .num_heads = 32, .intermediate_size = 8192, .vocab_size = 49152,
     .tie_word_embeddings = true, .published_params = 1'711'376'384,
     .published_source = "HF safetensors total, 1.71B"},
    // TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T
    {.name = "tinyllama-1.1b", .family = "llama", .hidden_size = 2048, .num_layers = 22,
     .num_heads = 32, .num_kv_heads = 4, .intermediate_size = 5632, .vocab_size = 32000,
     .published_params = 1'100'048'384, .published_source = "HF safetensors total (F32), 1.1B"},

    // qwen2: Qwen/Qwen2.5-*. q/k/v carry biases (o does not); 0.5B-3B are tied.
    {.name = "qwen2.5-0.5b", .family = "qwen2", .hidden_size = 896, .num_layers = 24,
     .num_heads = 14, .num_kv_heads = 2, .intermediate_size = 4864, .vocab_size = 151936,
     .tie_word_embeddings = true, .attention_bias = true, .published_params = 494'032'768,
     .published_source = "HF safetensors total, 494M (model card: 0.49B)"},
    {.name = "qwen2.5-1.5b", .family = "qwen2", .hidden_size = 1536, .num_layers = 28,
     .num_heads = 12, .num_kv_heads = 2, .intermediate_size = 8960, .vocab_size = 151936,
     .tie_word_embeddings = true, .attention_bias = true, .published_params = 1'543'714'304,
     .published_source = "HF safetensors total, 1.54B"},
    {.name = "qwen2.5-3b", .family = "qwen2", .hidden_size = 2048, .num_layers = 36,
     .num_heads = 16, .num_kv_heads = 2, .intermediate_size = 11008, .vocab_size = 151936,
     .tie_word_embeddings = true, .attention_bias = true, .published_params = 3'085'938'688,
     .published_source = "HF safetensors total, 3.09B"},
    {.name = "qwen2.5-7b", .family = "qwen2", .hidden_size = 3584, .num_layers = 28,
     .num_heads = 28, .num_kv_heads = 4, .intermediate_size = 18944, .vocab_size = 152064,
     .attention_bias = true, .published_params = 7'615'616'512,
     .published_source = "HF safetensors total, 7.62B"},
    {.name = "qwen2.5-14b", .family = "qwen2", .hidden_size = 5120, .num_layers = 48,
     .num_heads = 40, .num_kv_heads = 8, .intermediate_size = 13824, .vocab_size = 152064,
     .attention_bias = true, .published_params = 14'770'033'664,
     .published_source = "HF safetensors total, 14.8B"},
    {.name = "qwen2.5-32b", .family = "qwen2", .hidden_size = 5120, .num_layers = 64,
     .num_heads = 40, .num_kv_heads = 8, .intermediate_size = 27648, .vocab_size = 152064,
     .attention_bias = true, .published_params = 32'763'876'352,
     .published_source = "HF safetensors total, 32.8B"},
    {.name = "qwen2.5-72b", .family = "qwen2", .hidden_size = 8192, .num_layers = 80,
     .num_heads = 64, .num_kv_heads = 8, .intermediate_size = 29568, .vocab_size = 152064,
     .attention_bias = true, .published_params = 72'706'203'648,
     .published_source = "HF safetensors total, 72.7B"},

    // qwen3: Qwen/Qwen3-*. head_dim 128 at every size, per-head q/k RMSNorm, no biases.
    // The Hub totals of 0.6B and 1.7B include a stored copy of the tied lm_head (751,632,384
    // and 2,031,739,904), so these rows quote the KerasHub presets (keras-team/keras-hub
    // qwen3 presets.py), which count it once.
    {.name = "qwen3-0.6b", .family = "qwen3", .hidden_size = 1024, .num_layers = 28,
     .num_heads = 16, .num_kv_heads = 8, .head_dim = 128, .intermediate_size = 3072,
     .vocab_size = 151936, .tie_word_embeddings = true, .qk_norm = true,
     .published_params = 596'049'920, .published_source = "KerasHub preset qwen3_0.6b_en, 596M"},
    {.name = "qwen3-1.7b", .family = "qwen3", .hidden_size = 2048, .num_layers = 28,
     .num_heads = 16, .num_kv_heads = 8, .head_dim = 128, .intermediate_size = 6144,
     .vocab_size = 151936, .tie_word_embeddings = true, .qk_norm = true,
     .published_params = 1'720'574'976,
     .published_source = "KerasHub preset qwen3_1.7b_en, 1.72B"},
    {.name = "qwen3-4b", .family = "qwen3", .hidden_size = 2560, .num_layers = 36,
     .num_heads = 32, .num_kv_heads = 8, .head_dim = 128, .intermediate_size = 9728,
     .vocab_size = 151936, .tie_word_embeddings = true, .qk_norm = true,
     .published_params = 4'022'468'096, .published_source = "HF safetensors total, 4.02B"},
    {.name = "qwen3-8b", .family = "qwen3", .hidden_size = 4096, .num_layers = 36,
     .num_heads = 32, .num_kv_heads = 8, .head_dim = 128, .intermediate_size = 12288,
     .vocab_size = 151936, .qk_norm = true, .published_params = 8'190'735'360,
     .published_source = "HF safetensors total, 8.19B (model card: 8.2B)"},
    {.name = "qwen3-14b", .family = "qwen3", .hidden_size = 5120, .num_layers = 40,
     .num_heads = 40, .num_kv_heads = 8, .head_dim = 128, .intermediate_size = 17408,
     .vocab_size = 151936, .qk_norm = true, .published_params = 14'768'307'200,
     .published_source = "HF safetensors total, 14.8B"},
    {.name = "qwen3-32b", .family = "qwen3", .hidden_size = 5120, .num_layers = 64,
     .num_heads = 64, .num_kv_heads = 8, .head_dim = 128, .intermediate_size = 25600,
     .vocab_size = 151936, .qk_norm = true, .published_params = 32'762'123'264,
     .published_source = "HF safetensors total, 32.8B"},
    // qwen3_moe: Qwen/Qwen3-30B-A3B, Qwen/Qwen3-235B-A22B. Every layer is MoE
    // (decoder_sparse_step 1, mlp_only_layers []); 128 experts, 8 active, no shared expert.
    {.name = "qwen3-30b-a3b", .family = "qwen3_moe", .hidden_size = 2048, .num_layers = 48,
     .num_heads = 32, .num_kv_heads = 4, .head_dim = 128, .intermediate_size = 6144,
     .vocab_size = 151936, .qk_norm = true, .num_experts = 128, .experts_per_token = 8,
     .moe_intermediate_size = 768, .published_params = 30'532'122'624,
     .published_source = "HF safetensors total, 30.5B (model card: 30.5B, 3.3B active)"},
    {.name = "qwen3-235b-a22b", .family = "qwen3_moe", .hidden_size = 4096, .num_layers = 94,
     .num_heads = 64, .num_kv_heads = 4, .head_dim = 128, .intermediate_size = 12288,
     .vocab_size = 151936, .qk_norm = true, .num_experts = 128, .experts_per_token = 8,
     .moe_intermediate_size = 1536, .published_params = 235'093'634'560,
     .published_source = "HF safetensors total, 235B (model card: 235B, 22B active)"},

    // mistral: mistralai/Mistral-7B-v0.3 (vocab 32768; v0.1 had 32000, 0.1 % fewer),
    // mistralai/Mistral-Nemo-Base-2407, mistralai/Mistral-Small-24B-Base-2501.
    {.name = "mistral-7b", .family = "mistral", .hidden_size = 4096, .num_layers = 32,
     .num_heads = 32, .num_kv_heads = 8, .intermediate_size = 14336, .vocab_size = 32768,
     .published_params = 7'248'023'552, .published_source = "HF safetensors total, 7.25B"},
    {.name = "mistral-nemo-12b", .family = "mistral", .hidden_size = 5120, .num_layers = 40,
     .num_heads = 32, .num_kv_heads = 8, .head_dim = 128, .intermediate_size = 14336,
     .vocab_size = 131072, .published_params = 12'247'782'400,
     .published_source = "HF safetensors total, 12.2B"},
    {.name = "mistral-small-24b", .family = "mistral", .hidden_size = 5120, .num_layers = 40,
     .num_heads = 32, .num_kv_heads = 8, .head_dim = 128, .intermediate_size = 32768,
     .vocab_size = 131072, .published_params = 23'572'403'200,
     .published_source = "HF safetensors total, 23.6B"},
    // mixtral: mistralai/Mixtral-8x7B-v0.1, mistral-community/Mixtral-8x22B-v0.1; 8 experts
    // of the dense MLP width, 2 active.
    {.name = "mixtral-8x7b", .family = "mixtral", .hidden_size = 4096, .num_layers = 32,
     .num_heads = 32, .num_kv_heads = 8, .intermediate_size = 14336, .vocab_size = 32000,
     .num_experts = 8, .experts_per_token = 2, .published_params = 46'702'792'704,
     .published_source = "HF safetensors total, 46.7B"},
    {.name = "mixtral-8x22b", .family = "mixtral", .hidden_size = 6144, .num_layers = 56,
     .num_heads = 48, .num_kv_heads = 8, .intermediate_size = 16384, .vocab_size = 32000,
     .num_experts = 8, .experts_per_token = 2, .published_params = 140'620'634'112,
     .published_source = "HF safetensors total, 141B"},

    // gemma: google/gemma-{2b,7b}; tied, head_dim 256.
    {.name = "gemma-2b", .family = "gemma", .hidden_size = 2048, .num_layers = 18,
     .num_heads = 8, .num_kv_heads = 1, .head_dim = 256, .intermediate_size = 16384,
     .vocab_size = 256000, .tie_word_embeddings = true, .published_params = 2'506'172'416,
     .published_source = "HF safetensors total, 2.51B"},
    {.name = "gemma-7b", .family = "gemma", .hidden_size = 3072, .num_layers = 28,
     .num_heads = 16, .num_kv_heads = 16, .head_dim = 256, .intermediate_size = 24576,
     .vocab_size = 256000, .tie_word_embeddings = true, .published_params = 8'537'680'896,
     .published_source = "HF safetensors total, 8.54B"},
    // gemma2: google/gemma-2-{2b,9b,27b}; pre- and post-norms around attention and MLP.
    {.name = "gemma-2-2b", .family = "gemma2", .hidden_size = 2304, .num_layers = 26,
     .num_heads = 8, .num_kv_heads = 4, .head_dim = 256, .intermediate_size = 9216,
     .vocab_size = 256000, .tie_word_embeddings = true, .norms_per_layer = 4,
     .published_params = 2'614'341'888, .published_source = "HF safetensors total, 2.61B"},
    {.name = "gemma-2-9b", .family = "gemma2", .hidden_size = 3584, .num_layers = 42,
     .num_heads = 16, .num_kv_heads = 8, .head_dim = 256, .intermediate_size = 14336,
     .vocab_size = 256000, .tie_word_embeddings = true, .norms_per_layer = 4,
     .published_params = 9'241'705'984, .published_source = "HF safetensors total, 9.24B"},
    {.name = "gemma-2-27b", .family = "gemma2", .hidden_size = 4608, .num_layers = 46,
     .num_heads = 32, .num_kv_heads = 16, .head_dim = 128, .intermediate_size = 36864,
     .vocab_size = 256000, .tie_word_embeddings = true, .norms_per_layer = 4,
     .published_params = 27'227'128'320, .published_source = "HF safetensors total, 27.2B"},
    // gemma3_text: google/gemma-3-1b-pt (text only, vocab 262144).
    {.name = "gemma-3-1b", .family = "gemma3_text", .hidden_size = 1152, .num_layers = 26,
     .num_heads = 4, .num_kv_heads = 1, .head_dim = 256, .intermediate_size = 6912,
     .vocab_size = 262144, .tie_word_embeddings = true, .norms_per_layer = 4, .qk_norm = true,
     .published_params = 999'885'952, .published_source = "HF safetensors total, 1.0B"},
    // gemma3: google/gemma-3-{4b,12b,27b}-pt text_config (vocab 262208); the published
    // totals include the vision tower, carried in extra_params (see Gemma3VisionParams).
    {.name = "gemma-3-4b", .family = "gemma3", .hidden_size = 2560, .num_layers = 34,
     .num_heads = 8, .num_kv_heads = 4, .head_dim = 256, .intermediate_size = 10240,
     .vocab_size = 262208, .tie_word_embeddings = true, .norms_per_layer = 4, .qk_norm = true,
     .extra_params = Gemma3VisionParams(2560), .published_params = 4'300'079'472,
     .published_source = "HF safetensors total incl. vision tower, 4.3B"},
    {.name = "gemma-3-12b", .family = "gemma3", .hidden_size = 3840, .num_layers = 48,
     .num_heads = 16, .num_kv_heads = 8, .head_dim = 256, .intermediate_size = 15360,
     .vocab_size = 262208, .tie_word_embeddings = true, .norms_per_layer = 4, .qk_norm = true,
     .extra_params = Gemma3VisionParams(3840), .published_params = 12'187'325'040,
     .published_source = "HF safetensors total incl. vision tower, 12.2B"},
    {.name = "gemma-3-27b", .family = "gemma3", .hidden_size = 5376, .num_layers = 62,
     .num_heads = 32, .num_kv_heads = 16, .head_dim = 128, .intermediate_size = 21504,
     .vocab_size = 262208, .tie_word_embeddings = true, .norms_per_layer = 4, .qk_norm = true,
     .extra_params = Gemma3VisionParams(5376), .published_params = 27'432'406'640,
     .published_source = "HF safetensors total incl. vision tower, 27.4B"},

    // phi: microsoft/phi-1_5, microsoft/phi-2. Parallel attention and MLP behind one
    // biased LayerNorm, GELU MLP, biases everywhere. lm_head's bias (51200) is not counted.
    {.name = "phi-1.5", .family = "phi", .hidden_size = 2048, .num_layers = 24,
     .num_heads = 32, .intermediate_size = 8192, .vocab_size = 51200, .mlp = kPlain,
     .attention_bias = true, .mlp_bias = true, .norms_per_layer = 1, .layer_norm_bias = true,
     .published_params = 1'418'270'720,
     .published_source = "HF safetensors total, 1.42B (model card: 1.3B)"},
    {.name = "phi-2", .family = "phi", .hidden_size = 2560, .num_layers = 32, .num_heads = 32,
     .intermediate_size = 10240, .vocab_size = 51200, .mlp = kPlain, .attention_bias = true,
     .mlp_bias = true, .norms_per_layer = 1, .layer_norm_bias = true,
     .published_params = 2'779'683'840,
     .published_source = "HF safetensors total, 2.78B (model card: 2.7B)"},
    // phi3: microsoft/Phi-3-mini-4k-instruct, Phi-3-medium-4k-instruct,
    // Phi-3.5-mini-instruct, Phi-4-mini-instruct, phi-4 (fused qkv and gate_up; same counts).
    {.name = "phi-3-mini", .family = "phi3", .hidden_size = 3072, .num_layers = 32,
     .num_heads = 32, .intermediate_size = 8192, .vocab_size = 32064,
     .published_params = 3'821'079'552, .published_source = "HF safetensors total, 3.82B"},
    {.name = "phi-3-medium", .family = "phi3", .hidden_size = 5120, .num_layers = 40,
     .num_heads = 40, .num_kv_heads = 10, .intermediate_size = 17920, .vocab_size = 32064,
     .published_params = 13'960'238'080, .published_source = "HF safetensors total, 14.0B"},
    {.name = "phi-3.5-mini", .family = "phi3", .hidden_size = 3072, .num_layers = 32,
     .num_heads = 32, .intermediate_size = 8192, .vocab_size = 32064,
     .published_params = 3'821'079'552, .published_source = "HF safetensors total, 3.82B"},
    {.name = "phi-4-mini", .family = "phi3", .hidden_size = 3072, .num_layers = 32,
     .num_heads = 24, .num_kv_heads = 8, .intermediate_size = 8192, .vocab_size = 200064,
     .tie_word_embeddings = true, .published_params = 3'836'021'760,
     .published_source = "HF safetensors total, 3.84B"},
    {.name = "phi-4", .family = "phi3", .hidden_size = 5120, .num_layers = 40, .num_heads = 40,
     .num_kv_heads = 10, .intermediate_size = 17920, .vocab_size = 100352,
     .published_params = 14'659'507'200, .published_source = "HF safetensors total, 14.7B"},
    // phimoe: microsoft/Phi-3.5-MoE-instruct; biased q/k/v/o, biased LayerNorms, 16
    // experts of width 6400, 2 active. lm_head's bias (32064) is not counted.
    {.name = "phi-3.5-moe", .family = "phimoe", .hidden_size = 4096, .num_layers = 32,
     .num_heads = 32, .num_kv_heads = 8, .intermediate_size = 6400, .vocab_size = 32064,
     .attention_bias = true, .layer_norm_bias = true, .num_experts = 16,
     .experts_per_token = 2, .published_params = 41'900'000'000,
     .published_source = "HF safetensors total, 41.9B (model card: 6.6B active)"},

    // gpt_oss: openai/gpt-oss-{20b,120b}; all attention projections and expert MLPs
    // biased. Attention sinks (64 per layer) and router biases are not counted (2,304 and
    // 6,912 parameters).
    {.name = "gpt-oss-20b", .family = "gpt_oss", .hidden_size = 2880, .num_layers = 24,
     .num_heads = 64, .num_kv_heads = 8, .head_dim = 64, .intermediate_size = 2880,
     .vocab_size = 201088, .attention_bias = true, .mlp_bias = true, .num_experts = 32,
     .experts_per_token = 4, .published_params = 20'914'757'184,
     .published_source = "HF safetensors total, 20.9B (model card: 21B, 3.6B active)"},
    {.name = "gpt-oss-120b", .family = "gpt_oss", .hidden_size = 2880, .num_layers = 36,
     .num_heads = 64, .num_kv_heads = 8, .head_dim = 64, .intermediate_size = 2880,
     .vocab_size = 201088, .attention_bias = true, .mlp_bias = true, .num_experts = 128,
     .experts_per_token = 4, .published_params = 116'829'156'672,
     .published_source = "HF safetensors total, 117B (model card: 5.1B active)"},

    // Older architectures used by the calibration data (bench/data/README.md).
    // falcon: tiiuae/falcon-7b; multi-query, parallel attention behind one biased LayerNorm,
    // GELU MLP, no linear biases, lm_head tied. The Hub total, 7,217,189,760, also counts
    // the stored lm_head copy (65024 x 4544); without it: 6,921,720,704.
    {.name = "falcon-7b", .family = "falcon", .hidden_size = 4544, .num_layers = 32,
     .num_heads = 71, .num_kv_heads = 1, .intermediate_size = 18176, .vocab_size = 65024,
     .tie_word_embeddings = true, .mlp = kPlain, .norms_per_layer = 1,
     .layer_norm_bias = true, .published_params = 6'921'720'704,
     .published_source = "HF safetensors total 7.22B less the stored tied lm_head: 6.92B"},
    // bloom: bigscience/bloomz-7b1 (= bloom-7b1 shapes); tied, biased everywhere. The
    // embedding LayerNorm (8,192) is not counted.
    {.name = "bloomz-7b1", .family = "bloom", .hidden_size = 4096, .num_layers = 30,
     .num_heads = 32, .intermediate_size = 16384, .vocab_size = 250880,
     .tie_word_embeddings = true, .mlp = kPlain, .attention_bias = true, .mlp_bias = true,
     .layer_norm_bias = true, .published_params = 7'069'016'064,
     .published_source = "HF safetensors total, 7.07B"},
    // gpt_neox: stabilityai/stablelm-base-alpha-3b; untied embed_out, biased everywhere.
    {.name = "stablelm-base-alpha-3b", .family = "gpt_neox", .hidden_size = 4096,
     .num_layers = 16, .num_heads = 32, .intermediate_size = 16384, .vocab_size = 50688,
     .mlp = kPlain, .attention_bias = true, .mlp_bias = true, .layer_norm_bias = true,
     .published_params = 3'637'321'728,
     .published_source = "HF safetensors total, 3.64B (model card: 3B)"},
};
// clang-format on

ModelSpec ToSpec(const Row& r) {
  ModelSpec s;
  s.name = std::string(r.name);
  s.family = std::string(r.family);
  s.hidden_size = r.hidden_size;
  s.num_layers = r.num_layers;
  s.num_heads = r.num_heads;
  s.num_kv_heads = r.num_kv_heads;
  s.head_dim = r.head_dim;
  s.intermediate_size = r.intermediate_size;
  s.vocab_size = r.vocab_size;
  s.tie_word_embeddings = r.tie_word_embeddings;
  s.mlp = r.mlp;
  s.attention_bias = r.attention_bias;
  s.mlp_bias = r.mlp_bias;
  s.norms_per_layer = r.norms_per_layer;
  s.layer_norm_bias = r.layer_norm_bias;
  s.qk_norm = r.qk_norm;
  s.num_experts = r.num_experts;
  s.experts_per_token = r.experts_per_token;
  s.moe_intermediate_size = r.moe_intermediate_size;
  s.extra_params = r.extra_params;
  s.published_params = r.published_params;
  s.published_source = std::string(r.published_source);
  return s;
}

std::vector<ModelSpec> BuildCatalog() {
  std::vector<ModelSpec> out;
  out.reserve(std::size(kRows));
  for (const Row& row : kRows) {
    ModelSpec spec = ToSpec(row);
    const Message error = CompleteAndValidate(&spec);
    if (!error.empty()) {
      // A malformed table row is a build defect that catalog_test catches; never ship one.
      std::fprintf(stderr, "headroom: catalog entry %s: %s\n", spec.name.c_str(),
                   EnglishText(error).c_str());
      std::abort();
    }
    out.push_back(std::move(spec));
  }
  return out;
}

// Trailing words that name a variant (tuning, packaging, context length, release), not a
// different architecture.
constexpr std::string_view kVariantWords[] = {"instruct", "it",   "chat", "base", "pt",   "hf",
                                              "thinking", "bf16", "fp16", "fp32", "fp8",  "awq",
                                              "gptq",     "gguf", "int4", "int8", "4bit", "8bit",
                                              "bnb",      "4k",   "8k",   "32k",  "128k"};

bool AllDigitsOrDots(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '.';
  });
}

// "v0.3", "v1": a release; "2407", "2507": a YYMM release date.
bool IsReleaseWord(std::string_view w) {
  if (w.size() >= 2 && w[0] == 'v' && AllDigitsOrDots(w.substr(1))) return true;
  return w.size() == 4 && AllDigitsOrDots(w) && w.find('.') == std::string_view::npos;
}

// Repository names whose normalised form differs from the catalog name.
constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
    {"phi-1-5", "phi-1.5"},  // microsoft/phi-1_5
    {"mistral-nemo", "mistral-nemo-12b"},
    {"tinyllama", "tinyllama-1.1b"},
    {"bloom-7b1", "bloomz-7b1"},  // bloomz is bloom-7b1 fine-tuned; same shapes
};

}  // namespace

const std::vector<ModelSpec>& Catalog() {
  static const std::vector<ModelSpec> catalog = BuildCatalog();
  return catalog;
}

std::string NormalizeModelName(std::string_view name) {
  if (const size_t slash = name.rfind('/'); slash != std::string_view::npos) {
    name.remove_prefix(slash + 1);  // "meta-llama/Llama-3.1-8B" -> "Llama-3.1-8B"
  }
  std::string out;
  for (char c : name) {
    const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const char mapped = (lower == '_' || lower == ' ') ? '-' : lower;
    if (mapped == '-' && (out.empty() || out.back() == '-')) continue;  // collapse, no lead
    out.push_back(mapped);
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  // Strip variant words from the end, repeatedly: "-instruct-2507", "-chat-hf".
  for (;;) {
    const size_t dash = out.rfind('-');
    if (dash == std::string::npos) break;
    const std::string_view word = std::string_view(out).substr(dash + 1);
    const bool variant = IsReleaseWord(word) ||
                         std::find(std::begin(kVariantWords), std::end(kVariantWords), word) !=
                             std::end(kVariantWords);
    if (!variant) break;
    out.erase(dash);
  }
  // Meta's older repositories say "Meta-Llama-3-8B" and "Meta-Llama-3.1-8B".
  if (out.starts_with("meta-llama-")) out.erase(0, 5);
  for (const auto& [alias, canonical] : kAliases) {
    if (out == alias) return std::string(canonical);
  }
  return out;
}

const ModelSpec* FindModel(std::string_view name) {
  const std::string key = NormalizeModelName(name);
  for (const ModelSpec& spec : Catalog()) {
    if (spec.name == key) return &spec;
  }
  return nullptr;
}

std::vector<std::string> ClosestModelNames(std::string_view name, size_t n) {
  const std::string key = NormalizeModelName(name);
  std::vector<std::pair<size_t, std::string_view>> ranked;
  for (const ModelSpec& spec : Catalog()) {
    ranked.emplace_back(EditDistance(key, spec.name), spec.name);
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < ranked.size() && i < n; ++i) out.emplace_back(ranked[i].second);
  return out;
}

}  // namespace headroom
