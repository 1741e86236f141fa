// What an inference server needs beside a training run (`plan --serve`, `--beside serve:...`):
// its weights in their dtype, the KV cache of context x concurrency tokens, and the engine's
// own fixed overhead; and the smallest vLLM --gpu-memory-utilization that holds it.
//
// vLLM's fraction is a fraction of the device's total memory (docs/plan.md, "Beside an
// inference server"; vllm/v1/worker/gpu_worker.py, docs/sources.md), MemTotal on unified
// memory. The formulas are in docs/plan-formulas.md, "Serving".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/message.h"
#include "model/model_spec.h"

namespace headroom {

enum class ServeEngine { kVllm, kLlamaCpp, kOllama };
std::string_view Name(ServeEngine engine);  // "vllm", "llama.cpp", "ollama"
// "vllm", "llama.cpp" (or "llamacpp", "llama-cpp"), "ollama"; nullopt otherwise.
std::optional<ServeEngine> ParseServeEngine(std::string_view text);

struct ServeRequest {
  std::string model;  // a catalog name, or a config.json or model folder
  int64_t context = 0;
  int64_t concurrency = 1;
  ServeEngine engine = ServeEngine::kVllm;
  std::string dtype;  // "" = the model's stored dtype, else bf16
};

// The weight dtypes a server is sized for, in hundredths of a bit per parameter: bf16 and
// fp16 1600, fp32 3200, fp8 and int8 800, int4 425 (a 16-bit scale per group of 128), nvfp4
// 450 (an 8-bit scale per 16). nullopt for any other name.
std::optional<uint32_t> ServeDtypeCentibits(std::string_view dtype);

// The dtype a model is stored in: the safetensors headers' most common one when read
// ("bf16", "fp16", "fp32", "fp8"), else "bf16".
std::string ModelStoredDtype(const ModelSpec& spec);

// Bytes of KV cache per token of context: 2 (K and V) x layers x kv_heads x head_dim x
// `element_bytes`. Full attention in every layer: an upper bound for sliding-window and
// latent-attention models.
uint64_t KvBytesPerToken(const ModelSpec& spec, uint64_t element_bytes);

// The engine's fixed need besides weights and KV cache (CUDA graphs, activation workspace,
// compute buffers), with where the figure comes from and whether it is a guess.
struct EngineOverhead {
  uint64_t bytes = 0;
  Message source;
  bool guess = true;
};
EngineOverhead ServeEngineOverhead(ServeEngine engine);

// The smallest fraction in hundredths that holds `need_bytes` of `pool_bytes` (rounded up);
// nullopt when even 1.00 does not, or the pool is 0.
std::optional<double> SmallestVllmCap(uint64_t need_bytes, uint64_t pool_bytes);

struct ServeNeed {
  ServeRequest request;
  std::string dtype;  // the weights' dtype used
  uint64_t params = 0;
  uint64_t weight_bytes = 0;
  uint64_t kv_element_bytes = 2;
  uint64_t kv_bytes_per_token = 0;
  uint64_t kv_tokens = 0;  // context x concurrency
  uint64_t kv_bytes = 0;
  EngineOverhead overhead;
  uint64_t total_bytes = 0;        // weights + KV + overhead
  std::optional<double> vllm_cap;  // SmallestVllmCap(total, pool)
  // What the server takes out of the pool: vLLM the cap's share of it (its KV cache grows to
  // fill the cap), llama.cpp and Ollama the need (sized at load); 0 for a vLLM that does not
  // fit.
  uint64_t held_bytes = 0;
};

// The need of `request` for `spec` in a pool of `pool_bytes` (MemTotal). `request.dtype`
// must be one ServeDtypeCentibits knows, or "".
ServeNeed ComputeServeNeed(const ModelSpec& spec, const ServeRequest& request, uint64_t pool_bytes);

// The model a serve request names: the catalog, else a config.json or model folder. On
// failure nullopt and `*error` says why.
std::optional<ModelSpec> ResolveServeModel(const std::string& model, Message* error);

}  // namespace headroom
