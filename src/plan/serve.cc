#include "plan/serve.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "base/bytes.h"
#include "model/catalog.h"
#include "model/hf_config.h"

namespace headroom {
namespace {

struct ServeDtype {
  std::string_view name;
  uint32_t centibits;
};

constexpr ServeDtype kServeDtypes[] = {
    {"bf16", 1600}, {"fp16", 1600}, {"fp32", 3200}, {"fp8", 800},
    {"int8", 800},  {"int4", 425},  {"nvfp4", 450},
};

// safetensors' dtype names to the serve dtypes.
std::string_view FromStoredDtype(const std::string& stored) {
  if (stored == "BF16") return "bf16";
  if (stored == "F16") return "fp16";
  if (stored == "F32") return "fp32";
  if (stored.rfind("F8", 0) == 0) return "fp8";
  return "";
}

}  // namespace

std::string_view Name(ServeEngine engine) {
  switch (engine) {
    case ServeEngine::kVllm:
      return "vllm";
    case ServeEngine::kLlamaCpp:
      return "llama.cpp";
    case ServeEngine::kOllama:
      return "ollama";
  }
  return "vllm";
}

std::optional<ServeEngine> ParseServeEngine(std::string_view text) {
  if (text == "vllm") return ServeEngine::kVllm;
  if (text == "llama.cpp" || text == "llamacpp" || text == "llama-cpp") {
    return ServeEngine::kLlamaCpp;
  }
  if (text == "ollama") return ServeEngine::kOllama;
  return std::nullopt;
}

std::optional<uint32_t> ServeDtypeCentibits(std::string_view dtype) {
  for (const auto& d : kServeDtypes) {
    if (d.name == dtype) return d.centibits;
  }
  return std::nullopt;
}

std::string ModelStoredDtype(const ModelSpec& spec) {
  uint64_t most = 0;
  std::string_view found;
  for (const auto& [stored, count] : spec.stored_dtype_params) {
    const auto name = FromStoredDtype(stored);
    if (!name.empty() && count > most) {
      most = count;
      found = name;
    }
  }
  return found.empty() ? std::string("bf16") : std::string(found);
}

uint64_t KvBytesPerToken(const ModelSpec& spec, uint64_t element_bytes) {
  return 2 * static_cast<uint64_t>(spec.num_layers) * static_cast<uint64_t>(spec.num_kv_heads) *
         static_cast<uint64_t>(spec.head_dim) * element_bytes;
}

EngineOverhead ServeEngineOverhead(ServeEngine engine) {
  switch (engine) {
    case ServeEngine::kVllm:
      return {2 * kGiB,
              Msg("a guess: CUDA graphs, the profiling run's activations and NCCL/cuBLAS "
                  "workspaces, which vLLM measures at startup and does not publish as one figure "
                  "(docs/plan-formulas.md, \"Serving\")"),
              true};
    case ServeEngine::kLlamaCpp:
    case ServeEngine::kOllama:
      return {1 * kGiB,
              Msg("a guess from llama.cpp's logs: compute buffers of 105 to 672 MiB at the "
                  "default micro-batch of 512 (docs/plan-formulas.md, \"Serving\")"),
              true};
  }
  return {};
}

std::optional<double> SmallestVllmCap(uint64_t need_bytes, uint64_t pool_bytes) {
  if (pool_bytes == 0) return std::nullopt;
  // Hundredths, rounded up, in integers: ceil(100 * need / pool).
  // (Pools and needs below 10^16 bytes keep the product exact.)
  const uint64_t hundredths = (need_bytes * 100 + pool_bytes - 1) / pool_bytes;
  if (hundredths > 100) return std::nullopt;
  return static_cast<double>(std::max<uint64_t>(hundredths, 1)) / 100.0;
}

ServeNeed ComputeServeNeed(const ModelSpec& spec, const ServeRequest& request,
                           uint64_t pool_bytes) {
  ServeNeed n;
  n.request = request;
  n.dtype = request.dtype.empty() ? ModelStoredDtype(spec) : request.dtype;
  const uint64_t centibits = ServeDtypeCentibits(n.dtype).value_or(1600);
  n.params = TotalParams(spec);
  // Parameters stay below 10^15 (model/model_spec.h), so the product stays exact.
  n.weight_bytes = (n.params * centibits + 799) / 800;
  // The KV cache follows the model's activation dtype (vLLM's kv-cache-dtype "auto"):
  // 16-bit for every quantized or 16-bit model, 32-bit for an fp32 one.
  n.kv_element_bytes = n.dtype == "fp32" ? 4 : 2;
  n.kv_bytes_per_token = KvBytesPerToken(spec, n.kv_element_bytes);
  n.kv_tokens = static_cast<uint64_t>(request.context) * static_cast<uint64_t>(request.concurrency);
  n.kv_bytes = n.kv_bytes_per_token * n.kv_tokens;
  n.overhead = ServeEngineOverhead(request.engine);
  n.total_bytes = n.weight_bytes + n.kv_bytes + n.overhead.bytes;
  n.vllm_cap = SmallestVllmCap(n.total_bytes, pool_bytes);
  if (request.engine == ServeEngine::kVllm) {
    n.held_bytes =
        n.vllm_cap ? static_cast<uint64_t>(*n.vllm_cap * 100.0 + 0.5) * pool_bytes / 100 : 0;
  } else {
    n.held_bytes = n.total_bytes;
  }
  return n;
}

std::optional<ModelSpec> ResolveServeModel(const std::string& model, Message* error) {
  std::optional<ModelSpec> spec;
  if (const ModelSpec* found = FindModel(model)) {
    spec = *found;
  } else {
    std::error_code ec;
    if (!std::filesystem::exists(model, ec)) {
      *error =
          Msg("unknown model '{}': not in the catalog (plan --list-models), nor a "
              "config.json or model folder",
              model);
      return std::nullopt;
    }
    auto read = ReadModelPath(model);
    if (!read) {
      *error = read.error().what;
      return std::nullopt;
    }
    spec = std::move(*read);
  }
  Message invalid = CompleteAndValidate(&*spec);
  if (!invalid.empty()) {
    *error = invalid;
    return std::nullopt;
  }
  return spec;
}

}  // namespace headroom
