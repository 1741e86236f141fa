// Safetensors headers: the exact tensor inventory of a checkpoint without touching its data.
//
// The format (github.com/huggingface/safetensors, README "Format"): 8 bytes of little-endian
// u64 N, then N bytes of UTF-8 JSON mapping tensor names to {"dtype", "shape",
// "data_offsets": [begin, end]} (offsets into the data that follows the header), plus an
// optional "__metadata__" map of strings; then the data. The reference loader refuses N over
// 100,000,000 bytes, offsets that do not tile the data from 0 to its end, and spans that do
// not equal shape product x dtype size; so do we. Checkpoints can be 100 GB (sparse files in
// the benchmarks): only the 8 bytes and the header are ever read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace headroom {

// The format's own cap on the header (MAX_HEADER_SIZE in safetensors/src/tensor.rs).
inline constexpr uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

struct SafetensorsTensor {
  std::string name;
  std::string dtype;  // as the file spells it: "BF16", "F8_E4M3", "U8"
  std::vector<uint64_t> shape;
  uint64_t data_begin = 0;  // byte offsets into the data section, end exclusive
  uint64_t data_end = 0;
  uint64_t elements = 0;  // product of shape (1 for a scalar)
};

struct SafetensorsHeader {
  std::vector<SafetensorsTensor> tensors;       // in header order
  std::map<std::string, std::string> metadata;  // "__metadata__", e.g. {"format": "pt"}
  uint64_t total_elements = 0;
  std::map<std::string, uint64_t> dtype_elements;  // "BF16" -> elements of that dtype
  uint64_t data_bytes = 0;                         // sum of the tensors' byte spans
};

// Bits per element of a safetensors dtype ("BF16" -> 16, "F4" -> 4); 0 when unknown.
int SafetensorsDtypeBits(std::string_view dtype);

// Checks the 8-byte length prefix (`first_bytes` holds the file's first min(8, size)
// bytes) against the file size and the format's cap; returns the header length N.
// Errors: "file is empty", "file is 5 bytes, shorter than the 8-byte header length",
// "header length 9223372036854775807 is larger than the file (4096 bytes)".
Result<uint64_t> ParseSafetensorsLength(std::string_view first_bytes, uint64_t file_bytes);

// Parses and validates a header (the N bytes of JSON). `data_bytes` is what the file holds
// after the header; the tensors must tile it exactly. Errors name the tensor and the
// problem: "tensor \"w\": dtype \"F17\" is not a safetensors dtype".
Result<SafetensorsHeader> ParseSafetensorsHeader(std::string_view header_json, uint64_t data_bytes);

// Reads one file's header with pread (never the data; never a FIFO or device). Errors
// start with the path: "/m/model.safetensors: header length 9 is larger than ...".
Result<SafetensorsHeader> ReadSafetensorsHeader(const std::filesystem::path& path);

// model.safetensors.index.json: the distinct shard files its "weight_map" names, sorted.
// Each must be a relative path that stays inside the model folder (no "..", not absolute);
// the check is on the text, since a Hugging Face cache folder holds symlinks into
// ../../blobs that are legitimate.
Result<std::vector<std::string>> ParseSafetensorsIndex(std::string_view index_json);

// The totals of a model folder's checkpoint.
struct SafetensorsCheckpoint {
  std::vector<std::filesystem::path> files;  // headers read; empty when none found
  uint64_t total_elements = 0;
  std::map<std::string, uint64_t> dtype_elements;
  uint64_t data_bytes = 0;
};

// Reads the headers of the checkpoint in `dir`: the shards named by
// model.safetensors.index.json, else model.safetensors (what transformers loads), else every
// *.safetensors in the folder (a Mistral-style consolidated.safetensors, an MLX export). The
// index comes first so that a consolidated copy beside the shards is not counted twice. A
// folder without any is not an error (files is empty); a tensor name in two shards is.
Result<SafetensorsCheckpoint> ReadSafetensorsCheckpoint(const std::filesystem::path& dir);

}  // namespace headroom
