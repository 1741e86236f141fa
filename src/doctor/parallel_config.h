// Tensor-parallel settings in a training or serving config, for `doctor` G10. Configs come
// as YAML (axolotl, LLaMA-Factory, vLLM), JSON (DeepSpeed, HF) or a launch script's flags,
// so this is a line scanner over all three rather than a parser of one: it finds a known key
// and the integer after it.
//
//   tensor_parallel_size: 2        (YAML)       "tp_size": 2,          (JSON)
//   --tensor-parallel-size 2       (flags)      tensor_model_parallel_size = 2   (INI/TOML)
//
// Keys are compared after lower-casing, dropping leading dashes and reading '-' as '_'.
// Text after '#' is a comment. A key with no integer after it (nested YAML, "auto") is not
// reported; the value's own line is. Any input is scanned without a crash.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace headroom {

struct ParallelSetting {
  std::string key;    // as written, "tensor-parallel-size"
  int64_t value = 0;  // the integer after it
  size_t line = 0;    // 1-based
};

// The tensor-parallel keys: tensor_parallel, tensor_parallel_size, tensor_parallel_degree,
// tensor_model_parallel_size, tp_size, tp_degree.
std::vector<ParallelSetting> ScanParallelSettings(std::string_view text);

}  // namespace headroom
