#include "plan/workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "base/message.h"
#include "base/text.h"

namespace headroom {
namespace {

// Looks a spelling up in a table of {spelling, value}; the error lists the first spelling
// of each value, which is the canonical one.
template <typename T, size_t N>
Result<T> Lookup(const char* what, std::string_view text,
                 const std::array<std::pair<std::string_view, T>, N>& table) {
  const std::string key = AsciiLower(text);
  for (const auto& [name, value] : table) {
    if (name == key) return value;
  }
  std::string accepted;
  for (size_t i = 0; i < N; ++i) {
    bool first_of_value = true;
    for (size_t j = 0; j < i; ++j) first_of_value &= !(table[j].second == table[i].second);
    if (!first_of_value) continue;
    if (!accepted.empty()) accepted += "|";
    accepted += table[i].first;
  }
  // TRANSLATORS: {0} is what was looked up ("method", "dtype", ...), {1} the value given,
  // {2} the accepted values separated by '|'.
  return Error{Msg("unknown {0} '{1}' (expected {2})", MsgFrom(what), text, accepted)};
}

template <typename T, size_t N>
std::string_view NameOf(T value, const std::array<std::pair<std::string_view, T>, N>& table) {
  for (const auto& [name, v] : table) {
    if (v == value) return name;
  }
  return "?";
}

constexpr std::array<std::pair<std::string_view, Method>, 5> kMethods{{
    {"full", Method::kFull},
    {"lora", Method::kLora},
    {"qlora", Method::kQlora},
    {"nvfp4-lora", Method::kNvfp4Lora},
    {"nvfp4_lora", Method::kNvfp4Lora},
}};
constexpr std::array<std::pair<std::string_view, DType>, 10> kDTypes{{
    {"fp32", DType::kFp32},
    {"bf16", DType::kBf16},
    {"fp16", DType::kFp16},
    {"fp8", DType::kFp8},
    {"int8", DType::kInt8},
    {"nf4", DType::kNf4},
    {"int4", DType::kInt4},
    {"nvfp4", DType::kNvfp4},
    {"float32", DType::kFp32},
    {"bfloat16", DType::kBf16},
}};
constexpr std::array<std::pair<std::string_view, Optimizer>, 6> kOptimizers{{
    {"adamw", Optimizer::kAdamW},
    {"adamw-8bit", Optimizer::kAdamW8bit},
    {"sgd", Optimizer::kSgd},
    {"adafactor", Optimizer::kAdafactor},
    {"adamw8bit", Optimizer::kAdamW8bit},
    {"adamw_8bit", Optimizer::kAdamW8bit},
}};
constexpr std::array<std::pair<std::string_view, OptimizerStep>, 3> kSteps{{
    {"foreach", OptimizerStep::kForeach},
    {"fused", OptimizerStep::kFused},
    {"loop", OptimizerStep::kLoop},
}};
constexpr std::array<std::pair<std::string_view, Attention>, 3> kAttention{{
    {"sdpa", Attention::kSdpa},
    {"eager", Attention::kEager},
    {"flash", Attention::kFlash},
}};
constexpr std::array<std::pair<std::string_view, WorkloadKind>, 3> kKinds{{
    {"sft", WorkloadKind::kSft},
    {"dpo", WorkloadKind::kDpo},
    {"grpo", WorkloadKind::kGrpo},
}};
constexpr std::array<std::pair<std::string_view, LossKind>, 3> kLosses{{
    {"standard", LossKind::kStandard},
    {"chunked", LossKind::kChunked},
    {"fused", LossKind::kFused},
}};

}  // namespace

Result<Method> ParseMethod(std::string_view s) { return Lookup(N_("method"), s, kMethods); }
Result<DType> ParseDType(std::string_view s) { return Lookup(N_("dtype"), s, kDTypes); }
Result<Optimizer> ParseOptimizer(std::string_view s) {
  return Lookup(N_("optimizer"), s, kOptimizers);
}
Result<OptimizerStep> ParseOptimizerStep(std::string_view s) {
  return Lookup(N_("optimizer step"), s, kSteps);
}
Result<Attention> ParseAttention(std::string_view s) {
  return Lookup(N_("attention"), s, kAttention);
}
Result<WorkloadKind> ParseWorkloadKind(std::string_view s) {
  return Lookup(N_("workload"), s, kKinds);
}
Result<LossKind> ParseLossKind(std::string_view s) { return Lookup(N_("loss"), s, kLosses); }

std::string_view Name(Method m) { return NameOf(m, kMethods); }
std::string_view Name(DType d) { return NameOf(d, kDTypes); }
std::string_view Name(Optimizer o) { return NameOf(o, kOptimizers); }
std::string_view Name(OptimizerStep s) { return NameOf(s, kSteps); }
std::string_view Name(Attention a) { return NameOf(a, kAttention); }
std::string_view Name(WorkloadKind k) { return NameOf(k, kKinds); }
std::string_view Name(LossKind l) { return NameOf(l, kLosses); }
std::string_view Name(Quantizer q) {
  switch (q) {
    case Quantizer::kBitsandbytes:
      return "bitsandbytes";
    case Quantizer::kTorchao:
      return "torchao";
    case Quantizer::kTorchaoWholeTensor:
      return "torchao-whole-tensor";
  }
  return "?";
}

Result<std::vector<std::string>> ParseLoraTargets(std::string_view s) {
  const std::string text = AsciiLower(s);
  if (text == "all-linear" || text == "all_linear" || text == "all") {
    return std::vector<std::string>{"q", "k", "v", "o", "gate", "up", "down"};
  }
  if (text == "attn" || text == "attention") return std::vector<std::string>{"q", "k", "v", "o"};
  // Hugging Face and torchtune spellings map onto the short names.
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 18> kAliases{{
      {"q", "q"},
      {"k", "k"},
      {"v", "v"},
      {"o", "o"},
      {"gate", "gate"},
      {"up", "up"},
      {"down", "down"},
      {"q_proj", "q"},
      {"k_proj", "k"},
      {"v_proj", "v"},
      {"o_proj", "o"},
      {"output_proj", "o"},
      {"gate_proj", "gate"},
      {"up_proj", "up"},
      {"down_proj", "down"},
      {"w1", "gate"},
      {"w3", "up"},
      {"w2", "down"},
  }};
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    auto it = std::find_if(kAliases.begin(), kAliases.end(),
                           [&](const auto& a) { return a.first == item; });
    if (it == kAliases.end()) {
      return Error{
          Msg("unknown LoRA target '{}' (expected all-linear, attn, or a comma list of "
              "q,k,v,o,gate,up,down)",
              item)};
    }
    const std::string name(it->second);
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

double DTypeBytes(DType d) {
  switch (d) {
    case DType::kFp32:
      return 4;
    case DType::kBf16:
    case DType::kFp16:
      return 2;
    case DType::kFp8:
    case DType::kInt8:
      return 1;
    case DType::kNf4:
    case DType::kInt4:
    case DType::kNvfp4:
      return 0.5;
  }
  return 2;
}

DType DefaultWeightDType(Method m) {
  switch (m) {
    case Method::kQlora:
      return DType::kNf4;
    case Method::kNvfp4Lora:
      return DType::kNvfp4;
    case Method::kFull:
    case Method::kLora:
      return DType::kBf16;
  }
  return DType::kBf16;
}

bool IsLora(Method m) { return m != Method::kFull; }

}  // namespace headroom
