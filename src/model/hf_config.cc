// Implementation notes: config.json is scanned once with JsonReader; only the keys in kKeys
// are kept (top level, `text_config`, and a few of `quantization_config`), so a hostile
// 16 MiB file costs no more than its own text. Keys are read from text_config first, then
// the top level, and JSON null counts as absent (transformers writes "head_dim": null).
//
// Family facts come from the transformers modeling and configuration code of each
// model_type: which MLP (GELU "plain" or gated), LayerNorm with bias or RMSNorm, biases on
// the linears, tied embeddings when the config does not say (the default of each
// XxxConfig class), and q/k norms. Two shapes the ModelSpec has no field for are folded
// into extra_params: learned position tables (GPT-2, StarCoder, OPT) and BLOOM's embedding
// LayerNorm, so that ArchitectureParams matches the published counts of those models.
#include "model/hf_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <map>

#include "base/json_reader.h"
#include "base/message.h"
#include "model/safetensors.h"

namespace headroom {
namespace {

using Type = JsonReader::Type;

struct Field {
  Type type = Type::kNone;
  std::string text;  // the number literal, the decoded string, "true" or "false"
};
using Fields = std::map<std::string, Field, std::less<>>;

// The keys read from config.json or its text_config; all others are skipped unread.
// clang-format off
constexpr std::string_view kKeys[] = {
    "model_type", "hidden_size", "n_embd", "d_model", "num_hidden_layers", "n_layer", "num_layers",
    "num_decoder_layers", "num_attention_heads", "n_head", "num_heads", "num_key_value_heads",
    "num_kv_heads", "multi_query", "new_decoder_architecture", "parallel_attn", "head_dim", "d_kv",
    "intermediate_size", "n_inner", "ffn_dim", "d_ff", "ffn_hidden_size", "intermediate_size_mlp",
    "vocab_size", "tie_word_embeddings", "attention_bias", "mlp_bias", "bias", "use_bias",
    "feed_forward_proj", "num_local_experts", "num_experts", "n_routed_experts",
    "num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size",
    "n_shared_experts", "first_k_dense_replace", "interleave_moe_layer_step", "n_positions",
    "max_position_embeddings"};
// clang-format on
// The keys read from quantization_config (compression_config in older compressed-tensors).
constexpr std::string_view kQuantKeys[] = {"quant_method", "load_in_4bit", "format", "quant_algo"};

template <size_t N>
bool Contains(const std::string_view (&keys)[N], std::string_view key) {
  return std::find(std::begin(keys), std::end(keys), key) != std::end(keys);
}

struct ConfigFields {
  Fields top, text, quant;
  bool has_quant = false;
};

bool ReadField(JsonReader& r, Field* f) {
  f->type = r.Peek();
  std::string_view literal;
  bool b = false;
  switch (f->type) {
    case Type::kString:
      return r.ReadString(&f->text);
    case Type::kNumber:
      if (!r.ReadNumber(&literal)) return false;
      f->text = literal;
      return true;
    case Type::kBool:
      if (!r.ReadBool(&b)) return false;
      f->text = b ? "true" : "false";
      return true;
    default:
      return r.Skip();  // objects, arrays, null: their type is all a message needs
  }
}

// Reads the object at `r`, keeping the members named in `keys`.
template <size_t N>
bool ReadKnown(JsonReader& r, const std::string_view (&keys)[N], Fields* out) {
  if (!r.BeginObject()) return false;
  std::string key;
  while (r.NextMember(&key)) {
    if (!Contains(keys, key)) {
      if (!r.Skip()) return false;
    } else if (!ReadField(r, &(*out)[key])) {
      return false;
    }
  }
  return !r.failed();
}

Result<ConfigFields> ReadConfigFields(std::string_view text, std::string_view source) {
  ConfigFields c;
  JsonReader r(text);
  auto not_json = [&]() { return Error{Msg("{}: not JSON: {}", source, r.error())}; };
  const Type top = r.Peek();
  if (top != Type::kObject) {
    if (!r.Skip() || !r.Finish()) return not_json();
    const Message what = top == Type::kArray    ? Msg("an array")
                         : top == Type::kString ? Msg("a string")
                         : top == Type::kNumber ? Msg("a number")
                                                : Msg("a literal");
    return Error{Msg("{}: not a JSON object (the top level is {})", source, what)};
  }
  r.BeginObject();
  std::string key;
  while (r.NextMember(&key)) {
    bool ok = true;
    const bool object = r.Peek() == Type::kObject;
    if (key == "text_config" && object) {
      ok = ReadKnown(r, kKeys, &c.text);
    } else if ((key == "quantization_config" || key == "compression_config") && object) {
      c.has_quant = true;
      ok = ReadKnown(r, kQuantKeys, &c.quant);
    } else if (Contains(kKeys, key)) {
      ok = ReadField(r, &c.top[key]);
    } else {
      ok = r.Skip();
    }
    if (!ok) return not_json();
  }
  if (r.failed() || !r.Finish()) return not_json();
  return c;
}

Message Describe(const Field& f) {
  switch (f.type) {
    case Type::kNumber:
      return Message::Literal(f.text.size() > 40 ? f.text.substr(0, 40) + "..." : f.text);
    case Type::kString:
      return Msg("a string ({})", QuoteForMessage(f.text, 40));
    case Type::kBool:
      return Message::Literal(f.text);
    case Type::kObject:
      return Msg("an object");
    case Type::kArray:
      return Msg("an array");
    default:
      return Message::Literal("null");
  }
}

// Typed lookups over text_config, then the top level. The first bad value is remembered in
// error(); later lookups return their fallback.
class Lookup {
 public:
  static constexpr int64_t kRequired = -1;

  Lookup(const ConfigFields& c, std::string_view source) : c_(c), source_(source) {}

  const Field* Find(std::string_view key) const {
    for (const Fields* fields : {&c_.text, &c_.top}) {
      const auto it = fields->find(key);
      if (it != fields->end() && it->second.type != Type::kNone && it->second.type != Type::kNull) {
        return &it->second;
      }
    }
    return nullptr;
  }

  // The first of `names` that is present, as an integer >= min_value; `fallback` when none
  // is (kRequired: an error naming the first name).
  int64_t Int(std::initializer_list<std::string_view> names, int64_t fallback,
              int64_t min_value = 1) {
    for (std::string_view name : names) {
      const Field* f = Find(name);
      if (f == nullptr) continue;
      const std::optional<int64_t> v = f->type == Type::kNumber ? JsonInt64(f->text) : std::nullopt;
      if (!v || *v < min_value) {
        Fail(min_value > 0 ? Msg("{} must be a positive integer, got {}", name, Describe(*f))
                           : Msg("{} must be a non-negative integer, got {}", name, Describe(*f)));
        return 0;
      }
      return *v;
    }
    if (fallback == kRequired) {
      Fail(Msg("missing key {}", *names.begin()));
      return 0;
    }
    return fallback;
  }

  bool Bool(std::string_view name, bool fallback) {
    const Field* f = Find(name);
    if (f == nullptr) return fallback;
    if (f->type != Type::kBool) {
      Fail(Msg("{} must be true or false, got {}", name, Describe(*f)));
      return fallback;
    }
    return f->text == "true";
  }

  // A string value; "" when absent or of another type.
  static std::string String(const Fields& fields, std::string_view name) {
    const auto it = fields.find(name);
    return it != fields.end() && it->second.type == Type::kString ? it->second.text : "";
  }

  void Fail(Message what) {
    if (error_.empty()) {
      error_ = Message("{}: {}", {std::string(source_), std::make_shared<const Message>(what)});
    }
  }
  void Fail(const std::string& what) { Fail(Message::Literal(what)); }
  const Message& error() const { return error_; }

 private:
  const ConfigFields& c_;
  std::string_view source_;
  Message error_;
};

struct Family {
  std::string_view model_type;
  MlpKind mlp;
  int norms_per_layer;
  bool layer_norm_bias;
  bool attention_bias;       // when the config does not say
  bool mlp_bias;             // when the config does not say
  bool tie_word_embeddings;  // when the config does not say
  bool qk_norm;
  std::string_view bias_key;  // a key that sets both biases (Falcon "bias", StarCoder2 "use_bias")
};

constexpr MlpKind kPlainMlp = MlpKind::kPlain;
constexpr MlpKind kGated = MlpKind::kGated;
// Llama, Mistral, Mixtral, Phi-3, DeepSeek and unknown types: gated MLP, RMSNorm, no biases.
constexpr Family kDefaultFamily = {"", kGated, 2, false, false, false, false, false, ""};
constexpr Family kFamilies[] = {
    {"gpt2", kPlainMlp, 2, true, true, true, true, false, ""},
    {"gpt_bigcode", kPlainMlp, 2, true, true, true, true, false, ""},
    {"bloom", kPlainMlp, 2, true, true, true, true, false, ""},
    {"opt", kPlainMlp, 2, true, true, true, true, false, ""},
    {"gpt_neox", kPlainMlp, 2, true, true, true, false, false, ""},
    {"gptj", kPlainMlp, 1, true, false, true, false, false, ""},  // parallel block: one LayerNorm
    {"phi", kPlainMlp, 1, true, true, true, false, false, ""},    // phi-1, phi-1.5, phi-2
    {"falcon", kPlainMlp, 1, true, false, false, true, false, "bias"},
    {"starcoder2", kPlainMlp, 2, true, true, true, true, false, "use_bias"},
    {"t5", kPlainMlp, 2, false, false, false, true, false, ""},
    {"mt5", kPlainMlp, 2, false, false, false, false, false, ""},
    {"umt5", kPlainMlp, 2, false, false, false, false, false, ""},
    {"qwen2", kGated, 2, false, true, false, false, false, ""},  // q/k/v biases, no key
    {"qwen2_moe", kGated, 2, false, true, false, false, false, ""},
    {"qwen2_vl", kGated, 2, false, true, false, false, false, ""},
    {"qwen2_5_vl", kGated, 2, false, true, false, false, false, ""},
    {"qwen3", kGated, 2, false, false, false, false, true, ""},
    {"qwen3_moe", kGated, 2, false, false, false, false, true, ""},
    {"gemma", kGated, 2, false, false, false, true, false, ""},
    {"gemma2", kGated, 4, false, false, false, true, false, ""},  // pre/post norms
    {"gemma3", kGated, 4, false, false, false, true, true, ""},
    {"gemma3_text", kGated, 4, false, false, false, true, true, ""},
    {"olmo2", kGated, 2, false, false, false, false, true, ""},
    {"gpt_oss", kGated, 2, false, true, true, false, false, ""},
};

const Family& FindFamily(std::string_view model_type) {
  for (const Family& f : kFamilies) {
    if (f.model_type == model_type) return f;
  }
  return kDefaultFamily;
}

// Gemma 3's multimodal configs leave text_config keys at their Gemma3TextConfig defaults
// (transformers 4.50 configuration_gemma3.py): gemma-3-4b-it gives only hidden_size,
// intermediate_size and num_hidden_layers.
struct Gemma3Defaults {
  int64_t vocab = 262'208, hidden = 2304, intermediate = 9216, layers = 26, heads = 8, kv = 4,
          head_dim = 256;
};

// Whether stored elements undercount parameters: 4-bit formats pack two or eight weights
// into one U8 or I32 element. Unknown methods count as packed, so that exact_params is
// never claimed when it may be wrong.
bool PacksWeights(const ConfigFields& c) {
  if (!c.has_quant) return false;
  const std::string method = Lookup::String(c.quant, "quant_method");
  if (method == "fp8" || method == "fbgemm_fp8") return false;
  if (method == "bitsandbytes") {
    const auto it = c.quant.find("load_in_4bit");
    return it != c.quant.end() && it->second.text == "true";
  }
  if (method == "compressed-tensors") {
    const std::string format = Lookup::String(c.quant, "format");
    return !(format == "float-quantized" || format == "int-quantized" ||
             format == "naive-quantized");
  }
  if (method == "modelopt") return Lookup::String(c.quant, "quant_algo") != "FP8";
  return true;  // gptq, awq, mxfp4, hqq, aqlm, ...
}

// Mixture-of-experts fields: the experts, their width, shared and dense layers (DeepSeek,
// Qwen2-MoE, Llama 4 name them differently). Nothing for a dense model.
void ReadExperts(Lookup& f, const std::string& text_type, ModelSpec& s) {
  s.num_experts = f.Int({"num_local_experts", "num_experts", "n_routed_experts"}, 0, 0);
  if (s.num_experts > 0) {
    s.experts_per_token = f.Int({"num_experts_per_tok"}, 0, 0);
    s.moe_intermediate_size = f.Int({"moe_intermediate_size"}, 0, 0);
    s.num_shared_experts = f.Int({"n_shared_experts"}, 0, 0);     // DeepSeek
    s.num_dense_layers = f.Int({"first_k_dense_replace"}, 0, 0);  // DeepSeek
    // Qwen2-MoE gives one shared expert's width; the spec counts experts of the routed
    // width (5632 / 1408 = 4 for Qwen1.5-MoE-A2.7B).
    const int64_t shared_width = f.Int({"shared_expert_intermediate_size"}, 0, 0);
    const int64_t unit =
        s.moe_intermediate_size > 0 ? s.moe_intermediate_size : s.intermediate_size;
    if (shared_width > 0 && s.num_shared_experts == 0 && unit > 0) {
      const int64_t rounded = shared_width / unit + (shared_width % unit >= unit - unit / 2);
      s.num_shared_experts = std::max<int64_t>(1, rounded);
    }
    if (text_type == "llama4_text" || text_type == "llama4") {
      // Llama 4: intermediate_size is the expert width, intermediate_size_mlp the dense
      // layers'; every MoE layer adds one shared expert; one layer in
      // interleave_moe_layer_step is MoE.
      s.moe_intermediate_size = s.intermediate_size;
      s.intermediate_size = f.Int({"intermediate_size_mlp"}, s.intermediate_size);
      s.num_shared_experts = 1;
      const int64_t step = f.Int({"interleave_moe_layer_step"}, 1);
      if (step > 0) s.num_dense_layers = s.num_layers - s.num_layers / step;
    }
  }
}

// Learned position tables and BLOOM's embedding LayerNorm (see the notes at the top), in
// s.extra_params.
void ReadExtraParams(Lookup& f, const std::string& text_type, ModelSpec& s) {
  if (s.hidden_size > 0 && s.hidden_size <= kMaxModelDimension) {
    constexpr int64_t kMaxPositions = int64_t{1} << 26;
    int64_t positions = 0;
    if (text_type == "gpt2" || text_type == "gpt_bigcode") {
      positions = f.Int({"n_positions"}, 1024);  // GPT2Config default
    } else if (text_type == "opt") {
      positions = f.Int({"max_position_embeddings"}, 2048);
      if (positions <= kMaxPositions) positions += 2;  // OPT offsets positions by 2
    }
    if (positions > kMaxPositions) {
      f.Fail(fmt::format("{} learned positions is absurdly many", positions));
    } else {
      s.extra_params = positions * s.hidden_size;
    }
    if (text_type == "bloom") s.extra_params = 2 * s.hidden_size;
  }
}

Result<ModelSpec> BuildSpec(const ConfigFields& c, std::string_view source) {
  Lookup f(c, source);
  ModelSpec s;
  s.name = std::string(source);
  const std::string top_type = Lookup::String(c.top, "model_type");
  const std::string text_type_key = Lookup::String(c.text, "model_type");
  const std::string text_type = text_type_key.empty() ? top_type : text_type_key;
  s.family = top_type.empty() ? text_type : top_type;
  const Family& fam = FindFamily(text_type);
  const bool gemma3 = text_type == "gemma3" || text_type == "gemma3_text";
  const Gemma3Defaults g3;
  auto or_required = [&](int64_t gemma3_value) {
    return gemma3 ? gemma3_value : Lookup::kRequired;
  };

  s.hidden_size = f.Int({"hidden_size", "n_embd", "d_model"}, or_required(g3.hidden));
  s.num_layers = f.Int({"num_hidden_layers", "n_layer", "num_layers"}, or_required(g3.layers));
  s.num_heads = f.Int({"num_attention_heads", "n_head", "num_heads"}, or_required(g3.heads));
  s.vocab_size = f.Int({"vocab_size"}, or_required(g3.vocab));
  s.num_kv_heads = f.Int({"num_key_value_heads", "num_kv_heads"}, gemma3 ? g3.kv : 0);
  s.head_dim = f.Int({"head_dim", "d_kv"}, gemma3 ? g3.head_dim : 0);
  // Say so before any arithmetic below (4 x hidden, layer counts) could mislead or overflow.
  for (int64_t v : {s.hidden_size, s.num_layers, s.num_heads, s.num_kv_heads, s.head_dim}) {
    if (v > kMaxModelDimension) f.Fail(fmt::format("a dimension ({}) is absurdly large", v));
  }
  // GPT-2 style configs leave the MLP width out (n_inner: null): 4 x hidden.
  int64_t inter_fallback = gemma3 ? g3.intermediate : 0;
  if (fam.mlp == kPlainMlp && s.hidden_size <= kMaxModelDimension) {
    inter_fallback = 4 * s.hidden_size;
  }
  s.intermediate_size =
      f.Int({"intermediate_size", "n_inner", "ffn_dim", "d_ff", "ffn_hidden_size"}, inter_fallback);

  s.mlp = fam.mlp;
  if (text_type == "t5" || text_type == "mt5" || text_type == "umt5") {
    // feed_forward_proj "gated-gelu" (T5 v1.1, mT5) has wi_0 and wi_1: a gated MLP.
    const Field* proj = f.Find("feed_forward_proj");
    if (proj && proj->type == Type::kString && proj->text.starts_with("gated-")) s.mlp = kGated;
    const int64_t decoder_layers = f.Int({"num_decoder_layers"}, s.num_layers);
    if (decoder_layers > kMaxModelDimension)
      f.Fail(fmt::format("a dimension ({}) is absurdly large", decoder_layers));
    if (s.num_layers <= kMaxModelDimension && decoder_layers <= kMaxModelDimension)
      s.num_layers += decoder_layers;
  }
  s.norms_per_layer = fam.norms_per_layer;
  s.layer_norm_bias = fam.layer_norm_bias;
  s.qk_norm = fam.qk_norm;
  s.tie_word_embeddings = f.Bool("tie_word_embeddings", fam.tie_word_embeddings);
  const bool shared_bias = fam.bias_key.empty() ? false : f.Bool(fam.bias_key, fam.mlp_bias);
  s.attention_bias =
      f.Bool("attention_bias", fam.bias_key.empty() ? fam.attention_bias : shared_bias);
  s.mlp_bias = f.Bool("mlp_bias", fam.bias_key.empty() ? fam.mlp_bias : shared_bias);

  if (text_type == "falcon") {
    // Falcon-7B: multi-query attention and one LayerNorm for its parallel block. Falcon-40B
    // and later ("new_decoder_architecture"): grouped kv heads and two LayerNorms.
    const bool new_arch = f.Bool("new_decoder_architecture", false);
    if (new_arch) {
      s.norms_per_layer = 2;
    } else {
      if (f.Bool("multi_query", true)) s.num_kv_heads = 1;
      if (!f.Bool("parallel_attn", true)) s.norms_per_layer = 2;
    }
  } else if (text_type == "gpt_bigcode" && f.Bool("multi_query", true)) {
    s.num_kv_heads = 1;
  }

  ReadExperts(f, text_type, s);
  ReadExtraParams(f, text_type, s);

  if (!f.error().empty()) return Error{f.error()};
  if (s.intermediate_size == 0 && s.moe_intermediate_size == 0) {
    return Error{Msg("{}: missing key intermediate_size", source)};
  }
  const Message invalid = CompleteAndValidate(&s);
  if (!invalid.empty()) {
    return Error{
        Message("{}: {}", {std::string(source), std::make_shared<const Message>(invalid)})};
  }
  return s;
}

}  // namespace

Result<ModelSpec> ParseHfConfig(std::string_view json_text, std::string_view source_name) {
  Result<ConfigFields> fields = ReadConfigFields(json_text, source_name);
  if (!fields) return fields.error();
  return BuildSpec(*fields, source_name);
}

Result<ModelSpec> ReadModelPath(const std::filesystem::path& path,
                                std::optional<uint64_t>* inconsistent_header_params) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec) return Error{fmt::format("{}: {}", path.string(), ec.message()), ec.value()};
  const bool folder = std::filesystem::is_directory(status);
  if (!folder && !std::filesystem::is_regular_file(status)) {
    return Error{Msg("{}: not a config.json file or a model folder", path.string())};
  }
  const std::filesystem::path config = folder ? path / "config.json" : path;
  Result<FileText> text = ReadJsonFileText(config, kMaxHfConfigBytes);
  if (!text) return text.error();
  Result<ConfigFields> fields = ReadConfigFields(text->text(), config.string());
  if (!fields) return fields.error();
  Result<ModelSpec> spec = BuildSpec(*fields, config.string());
  if (!spec) return spec;
  spec->name = path.string();
  if (!folder) return spec;

  Result<SafetensorsCheckpoint> checkpoint = ReadSafetensorsCheckpoint(path);
  if (!checkpoint) return checkpoint.error();
  if (checkpoint->files.empty()) return spec;
  // AutoGPTQ's quantize_config.json predates quantization_config in config.json.
  const bool packed =
      PacksWeights(*fields) || std::filesystem::exists(path / "quantize_config.json", ec);
  // Unpacked weights hold one element per parameter, so the headers and config.json must
  // agree to within a vision tower or a tied head; a count outside [1/2, 2] x the
  // architecture's is not this model's checkpoint (it replaced config.json's count
  // and flipped the verdict). config.json's count is the consistent one then.
  const double architecture = static_cast<double>(ArchitectureParams(*spec));
  const double headers = static_cast<double>(checkpoint->total_elements);
  if (!packed && (headers < architecture / 2 || headers > architecture * 2)) {
    if (inconsistent_header_params) *inconsistent_header_params = checkpoint->total_elements;
    return spec;
  }
  spec->stored_dtype_params = checkpoint->dtype_elements;
  spec->checkpoint_bytes = checkpoint->data_bytes;
  if (!packed) spec->exact_params = checkpoint->total_elements;
  return spec;
}

}  // namespace headroom
