// A ModelSpec from a Hugging Face model: its config.json, and when a model folder is given,
// the safetensors headers beside it for the exact parameter count.
//
// ParseHfConfig is pure (text in, spec out); ReadModelPath does the file work. Both return
// one-line errors that start with the file: "config.json: missing key hidden_size",
// "/m/config.json: num_attention_heads must be a positive integer, got -4".
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>

#include "base/bytes.h"
#include "base/result.h"
#include "model/model_spec.h"

namespace headroom {

// Real config.json files are 1-10 KB (a classifier's id2label map can reach a few hundred
// KB); 16 MiB only keeps a hostile file from costing memory.
inline constexpr uint64_t kMaxHfConfigBytes = 16 * kMiB;

// Parses config.json text. Reads the keys transformers uses (aliases of GPT-2, Falcon, T5
// and DeepSeek included), takes a multimodal config's `text_config` keys first (Gemma 3,
// Llama 4), applies the family's facts (plain MLP, biases, norms, tied embeddings) and
// ends with CompleteAndValidate. `source_name` starts every error message and names the
// spec. exact_params and the safetensors fields stay empty.
Result<ModelSpec> ParseHfConfig(std::string_view json_text, std::string_view source_name);

// `path` is a config.json file, or a model folder holding one. For a folder, the
// safetensors headers (ReadSafetensorsCheckpoint) fill stored_dtype_params,
// checkpoint_bytes and exact_params; exact_params stays empty for checkpoints that pack
// several weights into one stored element (GPTQ, AWQ, bitsandbytes 4-bit, MXFP4, NVFP4),
// where an element count is not a parameter count.
// Headers whose element count is outside [1/2, 2] x what config.json describes are not this
// model's checkpoint (a partial download: 16 parameters beside an 8B config; a header with
// only __metadata__): the three fields stay empty, config.json's count stands, and the
// headers' count is put in `*inconsistent_header_params` when it is given.
Result<ModelSpec> ReadModelPath(const std::filesystem::path& path,
                                std::optional<uint64_t>* inconsistent_header_params = nullptr);

}  // namespace headroom
