#include "model/hf_config.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "base/json_reader.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::TempDir;
using testing::WriteFile;
using testing::WriteSafetensors;

const std::filesystem::path kFixtures = std::filesystem::path(testing::FixturePath("models"));

ModelSpec ParseFixture(const std::string& model) {
  const auto path = kFixtures / model / "config.json";
  Result<FileText> text = ReadJsonFileText(path, kMaxHfConfigBytes);
  EXPECT_TRUE(text.ok()) << EnglishText(text.error().what);
  if (!text.ok()) return {};
  Result<ModelSpec> spec = ParseHfConfig(text->text(), "config.json");
  EXPECT_TRUE(spec.ok()) << model << ": " << EnglishText(spec.error().what);
  return spec.ok() ? *spec : ModelSpec{};
}

// Parses a config that must fail and returns the message.
std::string ParseError(std::string_view json) {
  Result<ModelSpec> spec = ParseHfConfig(json, "config.json");
  EXPECT_FALSE(spec.ok()) << json;
  if (spec.ok()) return "";
  EXPECT_EQ(EnglishText(spec.error().what).find('\n'), std::string::npos);
  return EnglishText(spec.error().what);
}

constexpr char kTiny[] =
    R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,)"
    R"("num_key_value_heads":2,"intermediate_size":128,"vocab_size":256,"tie_word_embeddings":false)";

TEST(HfConfigTest, Llama31_8B) {
  const ModelSpec s = ParseFixture("llama-3.1-8b");
  EXPECT_EQ(s.name, "config.json");
  EXPECT_EQ(s.family, "llama");
  EXPECT_EQ(s.hidden_size, 4096);
  EXPECT_EQ(s.num_layers, 32);
  EXPECT_EQ(s.num_heads, 32);
  EXPECT_EQ(s.num_kv_heads, 8);
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_EQ(s.intermediate_size, 14336);
  EXPECT_EQ(s.vocab_size, 128256);
  EXPECT_FALSE(s.tie_word_embeddings);
  EXPECT_EQ(s.mlp, MlpKind::kGated);
  EXPECT_FALSE(s.attention_bias);
  EXPECT_EQ(ArchitectureParams(s), 8'030'261'248u);  // meta-llama/Llama-3.1-8B
  EXPECT_FALSE(s.exact_params.has_value());
}

TEST(HfConfigTest, Qwen3_30B_A3B) {
  const ModelSpec s = ParseFixture("qwen3-30b-a3b");
  EXPECT_EQ(s.family, "qwen3_moe");
  EXPECT_EQ(s.num_experts, 128);
  EXPECT_EQ(s.experts_per_token, 8);
  EXPECT_EQ(s.moe_intermediate_size, 768);
  EXPECT_EQ(s.head_dim, 128);  // given apart: 2048 / 32 would be 64
  EXPECT_TRUE(s.qk_norm);
  EXPECT_EQ(s.num_shared_experts, 0);
  EXPECT_EQ(ArchitectureParams(s), 30'532'122'624u);  // "30.5B" on the model card
}

TEST(HfConfigTest, Gemma3_4B_ReadsTextConfigAndItsDefaults) {
  // gemma-3-4b's text_config gives three keys; heads, kv heads, head_dim and vocab are
  // Gemma3TextConfig's defaults.
  const ModelSpec s = ParseFixture("gemma-3-4b");
  EXPECT_EQ(s.family, "gemma3");
  EXPECT_EQ(s.hidden_size, 2560);
  EXPECT_EQ(s.intermediate_size, 10240);
  EXPECT_EQ(s.num_layers, 34);
  EXPECT_EQ(s.num_heads, 8);
  EXPECT_EQ(s.num_kv_heads, 4);
  EXPECT_EQ(s.head_dim, 256);
  EXPECT_EQ(s.vocab_size, 262208);
  EXPECT_EQ(s.norms_per_layer, 4);
  EXPECT_TRUE(s.qk_norm);
  EXPECT_TRUE(s.tie_word_embeddings);
  // The text decoder only; the SigLIP tower (~0.42B) is not in the config's keys.
  EXPECT_EQ(ArchitectureParams(s), 3'880'263'168u);
}

TEST(HfConfigTest, Falcon7B) {
  const ModelSpec s = ParseFixture("falcon-7b");
  EXPECT_EQ(s.mlp, MlpKind::kPlain);
  EXPECT_EQ(s.num_kv_heads, 1);  // multi_query
  EXPECT_EQ(s.head_dim, 64);
  EXPECT_EQ(s.intermediate_size, 4 * 4544);
  EXPECT_EQ(s.norms_per_layer, 1);
  EXPECT_TRUE(s.layer_norm_bias);
  EXPECT_FALSE(s.attention_bias);
  EXPECT_TRUE(s.tie_word_embeddings);
  EXPECT_EQ(ArchitectureParams(s), 6'921'720'704u);  // tiiuae/falcon-7b
}

TEST(HfConfigTest, Gpt2) {
  const ModelSpec s = ParseFixture("gpt2");
  EXPECT_EQ(s.hidden_size, 768);
  EXPECT_EQ(s.num_layers, 12);
  EXPECT_EQ(s.num_heads, 12);
  EXPECT_EQ(s.intermediate_size, 3072);  // n_inner absent: 4 x n_embd
  EXPECT_EQ(s.mlp, MlpKind::kPlain);
  EXPECT_TRUE(s.attention_bias && s.mlp_bias && s.layer_norm_bias && s.tie_word_embeddings);
  EXPECT_EQ(s.extra_params, 1024 * 768);           // the learned position table
  EXPECT_EQ(ArchitectureParams(s), 124'439'808u);  // openai-community/gpt2
}

TEST(HfConfigTest, Qwen25_05B) {
  const ModelSpec s = ParseFixture("qwen2.5-0.5b");
  EXPECT_TRUE(s.attention_bias);  // no key: Qwen2 always has q/k/v biases
  EXPECT_TRUE(s.tie_word_embeddings);
  EXPECT_EQ(ArchitectureParams(s), 494'032'768u);  // Qwen/Qwen2.5-0.5B
}

TEST(HfConfigTest, RejectsHostileConfigs) {
  const std::string tiny = kTiny;
  struct Case {
    std::string json;
    std::string error;
  };
  const Case cases[] = {
      {"", "config.json: not JSON: unexpected end of input at byte 0"},
      {"{\"hidden_size\": 64,", "config.json: not JSON: unexpected end of input at byte 19"},
      {"{'a': 1}", "config.json: not JSON: expected a string key at byte 1"},
      {"[1, 2]", "config.json: not a JSON object (the top level is an array)"},
      {"42", "config.json: not a JSON object (the top level is a number)"},
      {"\"x\"", "config.json: not a JSON object (the top level is a string)"},
      {"null", "config.json: not a JSON object (the top level is a literal)"},
      {"{}", "config.json: missing key hidden_size"},
      {R"({"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":9})",
       "config.json: missing key intermediate_size"},
      {tiny + R"(,"num_attention_heads":-4})",
       "config.json: num_attention_heads must be a positive integer, got -4"},
      {tiny + R"(,"hidden_size":0})", "config.json: hidden_size must be a positive integer, got 0"},
      {tiny + R"(,"hidden_size":"64"})",
       "config.json: hidden_size must be a positive integer, got a string (\"64\")"},
      {tiny + R"(,"hidden_size":64.5})", "hidden_size must be a positive integer, got 64.5"},
      {tiny + R"(,"hidden_size":64.0})", "hidden_size must be a positive integer, got 64.0"},
      {tiny + R"(,"hidden_size":1e3})", "hidden_size must be a positive integer, got 1e3"},
      {tiny + R"(,"vocab_size":99999999999999999999})",
       "vocab_size must be a positive integer, got 99999999999999999999"},
      {tiny + R"(,"vocab_size":true})", "vocab_size must be a positive integer, got true"},
      {tiny + R"(,"vocab_size":[256]})", "vocab_size must be a positive integer, got an array"},
      {tiny + R"(,"vocab_size":{}})", "vocab_size must be a positive integer, got an object"},
      {tiny + R"(,"vocab_size":null})", "config.json: missing key vocab_size"},
      {tiny + R"(,"num_experts":-1})", "num_experts must be a non-negative integer, got -1"},
      {tiny + R"(,"tie_word_embeddings":"yes"})",
       "tie_word_embeddings must be true or false, got a string (\"yes\")"},
      {tiny + R"(,"hidden_size":1099511627776})",
       "config.json: a dimension (1099511627776) is absurdly large"},
      {tiny + R"(,"hidden_size":9223372036854775807})",
       "config.json: a dimension (9223372036854775807) is absurdly large"},
      {tiny + R"(,"num_key_value_heads":8})",
       "config.json: num_key_value_heads is larger than num_attention_heads"},
      {tiny + R"(,"hidden_size":66})", "hidden_size is not a multiple of num_attention_heads"},
      {tiny + R"(,"num_local_experts":8})", "num_experts_per_tok must be positive for a MoE model"},
      {tiny + R"(,"num_local_experts":8,"num_experts_per_tok":9})",
       "num_experts_per_tok is larger than num_experts"},
      {tiny + R"(,"deep":)" + std::string(100, '[') + std::string(100, ']') + "}",
       "config.json: not JSON: nesting deeper than 64 levels at byte"},
      {tiny + ",\"name\":\"\xC3\x28\"}", "config.json: not JSON: invalid UTF-8 in string"},
      {tiny + "} trailing", "config.json: not JSON: trailing characters after the value"},
      {R"({"model_type":"gpt2","n_embd":9223372036854775807,"n_layer":1,"n_head":1,"vocab_size":2})",
       "config.json: a dimension (9223372036854775807) is absurdly large"},
      {R"({"model_type":"gpt2","n_embd":64,"n_layer":1,"n_head":1,"vocab_size":2,"n_positions":9223372036854775807})",
       "9223372036854775807 learned positions is absurdly many"},
      {R"({"model_type":"opt","hidden_size":64,"num_hidden_layers":1,"num_attention_heads":1,"vocab_size":2,"max_position_embeddings":9223372036854775807})",
       "learned positions is absurdly many"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.json.substr(0, 160));
    const std::string message = ParseError(c.json);
    EXPECT_NE(message.find(c.error), std::string::npos) << "message: " << message;
  }
}

TEST(HfConfigTest, KeyRules) {
  // Duplicate keys: the last wins (Python's json does the same); null means absent; keys
  // not read are skipped however large.
  std::string json = std::string(kTiny) + R"(,"hidden_size":32,"hidden_size":64,"head_dim":null,)" +
                     R"("id2label":{"0":"a"},"big":[)" + std::string(200000, '1') + "]}";
  Result<ModelSpec> s = ParseHfConfig(json, "c");
  ASSERT_TRUE(s.ok()) << EnglishText(s.error().what);
  EXPECT_EQ(s->hidden_size, 64);
  EXPECT_EQ(s->head_dim, 16);
  // text_config wins over the top level; top-level keys fill what it lacks.
  s = ParseHfConfig(
      R"({"model_type":"llava","hidden_size":8,"vocab_size":300,)"
      R"("text_config":{"model_type":"mistral","hidden_size":64,"num_hidden_layers":2,)"
      R"("num_attention_heads":4,"intermediate_size":128}})",
      "c");
  ASSERT_TRUE(s.ok()) << EnglishText(s.error().what);
  EXPECT_EQ(s->family, "llava");
  EXPECT_EQ(s->hidden_size, 64);
  EXPECT_EQ(s->vocab_size, 300);
}

TEST(HfConfigTest, AlternativeKeyNames) {
  // T5: d_model, d_ff, num_layers + num_decoder_layers, num_heads, d_kv; gated-gelu.
  Result<ModelSpec> t5 = ParseHfConfig(
      R"({"model_type":"t5","d_model":512,"d_ff":1024,"d_kv":64,"num_heads":6,"num_layers":8,)"
      R"("num_decoder_layers":8,"vocab_size":32128,"feed_forward_proj":"gated-gelu","tie_word_embeddings":false})",
      "c");
  ASSERT_TRUE(t5.ok()) << EnglishText(t5.error().what);
  EXPECT_EQ(t5->hidden_size, 512);
  EXPECT_EQ(t5->intermediate_size, 1024);
  EXPECT_EQ(t5->num_heads, 6);
  EXPECT_EQ(t5->head_dim, 64);
  EXPECT_EQ(t5->num_layers, 16);
  EXPECT_EQ(t5->mlp, MlpKind::kGated);
  // Falcon-40B: the new decoder architecture has grouped kv heads and two LayerNorms.
  Result<ModelSpec> falcon = ParseHfConfig(
      R"({"model_type":"falcon","hidden_size":8192,"num_attention_heads":128,"num_kv_heads":8,)"
      R"("num_hidden_layers":60,"vocab_size":65024,"new_decoder_architecture":true,"multi_query":true})",
      "c");
  ASSERT_TRUE(falcon.ok()) << EnglishText(falcon.error().what);
  EXPECT_EQ(falcon->num_kv_heads, 8);
  EXPECT_EQ(falcon->norms_per_layer, 2);
  // StarCoder (gpt_bigcode): n_* keys, n_inner null, multi-query.
  Result<ModelSpec> starcoder = ParseHfConfig(
      R"({"model_type":"gpt_bigcode","n_embd":6144,"n_head":48,"n_inner":24576,"n_layer":40,)"
      R"("n_positions":8192,"vocab_size":49152,"multi_query":true})",
      "c");
  ASSERT_TRUE(starcoder.ok()) << EnglishText(starcoder.error().what);
  EXPECT_EQ(starcoder->num_kv_heads, 1);
  EXPECT_EQ(starcoder->intermediate_size, 24576);
  EXPECT_EQ(starcoder->mlp, MlpKind::kPlain);
  // OPT: ffn_dim.
  Result<ModelSpec> opt = ParseHfConfig(
      R"({"model_type":"opt","hidden_size":768,"ffn_dim":3072,"num_attention_heads":12,)"
      R"("num_hidden_layers":12,"vocab_size":50272,"max_position_embeddings":2048})",
      "c");
  ASSERT_TRUE(opt.ok()) << EnglishText(opt.error().what);
  EXPECT_EQ(opt->intermediate_size, 3072);
  EXPECT_EQ(opt->extra_params, 2050 * 768);
}

TEST(HfConfigTest, MixtureOfExpertsKeys) {
  // DeepSeek-V3 style: routed and shared experts, the first layers dense.
  Result<ModelSpec> ds = ParseHfConfig(
      R"({"model_type":"deepseek_v3","hidden_size":7168,"intermediate_size":18432,)"
      R"("moe_intermediate_size":2048,"n_routed_experts":256,"n_shared_experts":1,)"
      R"("num_experts_per_tok":8,"first_k_dense_replace":3,"num_attention_heads":128,)"
      R"("num_key_value_heads":128,"num_hidden_layers":61,"vocab_size":129280})",
      "c");
  ASSERT_TRUE(ds.ok()) << EnglishText(ds.error().what);
  EXPECT_EQ(ds->num_experts, 256);
  EXPECT_EQ(ds->num_shared_experts, 1);
  EXPECT_EQ(ds->num_dense_layers, 3);
  // Qwen1.5-MoE-A2.7B: one shared expert 4 x the routed width.
  Result<ModelSpec> qwen = ParseHfConfig(
      R"({"model_type":"qwen2_moe","hidden_size":2048,"intermediate_size":5632,)"
      R"("moe_intermediate_size":1408,"shared_expert_intermediate_size":5632,"num_experts":60,)"
      R"("num_experts_per_tok":4,"num_attention_heads":16,"num_hidden_layers":24,"vocab_size":151936})",
      "c");
  ASSERT_TRUE(qwen.ok()) << EnglishText(qwen.error().what);
  EXPECT_EQ(qwen->num_shared_experts, 4);
  EXPECT_TRUE(qwen->attention_bias);
  // Mixtral: no moe_intermediate_size; the experts have intermediate_size.
  Result<ModelSpec> mixtral = ParseHfConfig(
      R"({"model_type":"mixtral","hidden_size":4096,"intermediate_size":14336,"num_local_experts":8,)"
      R"("num_experts_per_tok":2,"num_attention_heads":32,"num_key_value_heads":8,)"
      R"("num_hidden_layers":32,"vocab_size":32000})",
      "c");
  ASSERT_TRUE(mixtral.ok()) << EnglishText(mixtral.error().what);
  EXPECT_EQ(mixtral->moe_intermediate_size, 14336);
  // Llama 4 Maverick style: every other layer MoE, dense layers wider, one shared expert.
  Result<ModelSpec> llama4 = ParseHfConfig(
      R"({"model_type":"llama4","text_config":{"model_type":"llama4_text","hidden_size":5120,)"
      R"("intermediate_size":8192,"intermediate_size_mlp":16384,"num_local_experts":128,)"
      R"("num_experts_per_tok":1,"interleave_moe_layer_step":2,"num_attention_heads":40,)"
      R"("num_key_value_heads":8,"head_dim":128,"num_hidden_layers":48,"vocab_size":202048}})",
      "c");
  ASSERT_TRUE(llama4.ok()) << EnglishText(llama4.error().what);
  EXPECT_EQ(llama4->moe_intermediate_size, 8192);
  EXPECT_EQ(llama4->intermediate_size, 16384);
  EXPECT_EQ(llama4->num_dense_layers, 24);
  EXPECT_EQ(llama4->num_shared_experts, 1);
}

struct TensorDef {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
};

// Writes a shard holding `tensors` laid end to end; returns their element count.
uint64_t WriteShard(const std::filesystem::path& path, const std::vector<TensorDef>& tensors) {
  std::string header = "{";
  uint64_t offset = 0, elements = 0;
  for (const auto& t : tensors) {
    uint64_t n = 1;
    for (uint64_t d : t.shape) n *= d;
    const uint64_t bytes = n * (t.dtype == "F32" ? 4 : 2);
    header += fmt::format(R"({}"{}":{{"dtype":"{}","shape":[{}],"data_offsets":[{},{}]}})",
                          header.size() > 1 ? "," : "", t.name, t.dtype, fmt::join(t.shape, ","),
                          offset, offset + bytes);
    offset += bytes;
    elements += n;
  }
  WriteSafetensors(path, header + "}", offset);
  return elements;
}

// A tiny Llama folder: config.json, two shards and their index.
uint64_t WriteTinyLlama(const TempDir& dir) {
  WriteFile(dir / "config.json", std::string(kTiny) + "}");
  auto layer = [](int i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    return std::vector<TensorDef>{{p + "self_attn.q_proj.weight", "BF16", {64, 64}},
                                  {p + "self_attn.k_proj.weight", "BF16", {32, 64}},
                                  {p + "self_attn.v_proj.weight", "BF16", {32, 64}},
                                  {p + "self_attn.o_proj.weight", "BF16", {64, 64}},
                                  {p + "mlp.gate_proj.weight", "BF16", {128, 64}},
                                  {p + "mlp.up_proj.weight", "BF16", {128, 64}},
                                  {p + "mlp.down_proj.weight", "BF16", {64, 128}},
                                  {p + "input_layernorm.weight", "F32", {64}},
                                  {p + "post_attention_layernorm.weight", "F32", {64}}};
  };
  std::vector<TensorDef> first = layer(0), second = layer(1);
  first.insert(first.begin(), {"model.embed_tokens.weight", "BF16", {256, 64}});
  second.push_back({"model.norm.weight", "F32", {64}});
  second.push_back({"lm_head.weight", "BF16", {256, 64}});
  std::string index = R"({"metadata":{"total_size":1},"weight_map":{)";
  for (const auto& [tensors, file] : {std::pair{&first, "model-00001-of-00002.safetensors"},
                                      std::pair{&second, "model-00002-of-00002.safetensors"}}) {
    for (const auto& t : *tensors) index += fmt::format(R"("{}":"{}",)", t.name, file);
  }
  index.back() = '}';
  WriteFile(dir / "model.safetensors.index.json", index + "}");
  return WriteShard(dir / "model-00001-of-00002.safetensors", first) +
         WriteShard(dir / "model-00002-of-00002.safetensors", second);
}

TEST(HfConfigTest, ReadsAModelFolderWithShards) {
  TempDir dir("hf");
  const uint64_t elements = WriteTinyLlama(dir);
  Result<ModelSpec> s = ReadModelPath(dir.path());
  ASSERT_TRUE(s.ok()) << EnglishText(s.error().what);
  EXPECT_EQ(s->name, dir.path().string());
  ASSERT_TRUE(s->exact_params.has_value());
  EXPECT_EQ(*s->exact_params, elements);
  EXPECT_EQ(*s->exact_params, ArchitectureParams(*s));  // the shapes agree with the config
  EXPECT_EQ(TotalParams(*s), elements);
  EXPECT_EQ(s->stored_dtype_params.at("F32"), 5u * 64u);
  EXPECT_EQ(s->stored_dtype_params.at("BF16"), elements - 5u * 64u);
  EXPECT_EQ(s->checkpoint_bytes, 2 * (elements - 5 * 64) + 4 * 5 * 64);
  // The config file alone: no safetensors are read.
  Result<ModelSpec> config_only = ReadModelPath(dir / "config.json");
  ASSERT_TRUE(config_only.ok()) << EnglishText(config_only.error().what);
  EXPECT_FALSE(config_only->exact_params.has_value());
  EXPECT_FALSE(config_only->checkpoint_bytes.has_value());
}

TEST(HfConfigTest, AFolderWithoutSafetensorsHasNoExactCount) {
  TempDir dir("hf");
  WriteFile(dir / "config.json", std::string(kTiny) + "}");
  WriteFile(dir / "pytorch_model.bin", "not read");
  Result<ModelSpec> s = ReadModelPath(dir.path());
  ASSERT_TRUE(s.ok()) << EnglishText(s.error().what);
  EXPECT_FALSE(s->exact_params.has_value());
  EXPECT_FALSE(s->checkpoint_bytes.has_value());
  EXPECT_TRUE(s->stored_dtype_params.empty());
  EXPECT_EQ(ArchitectureParams(*s), 106'816u);
}

TEST(HfConfigTest, PackedQuantizationGivesNoExactCount) {
  TempDir dir("hf");
  WriteTinyLlama(dir);
  WriteFile(dir / "config.json",
            std::string(kTiny) + R"(,"quantization_config":{"quant_method":"gptq","bits":4}})");
  Result<ModelSpec> s = ReadModelPath(dir.path());
  ASSERT_TRUE(s.ok()) << EnglishText(s.error().what);
  EXPECT_FALSE(s->exact_params.has_value());
  EXPECT_TRUE(s->checkpoint_bytes.has_value());
  EXPECT_FALSE(s->stored_dtype_params.empty());
  // bitsandbytes 8-bit and FP8 keep one element per weight.
  for (const char* quant : {R"({"quant_method":"bitsandbytes","load_in_8bit":true})",
                            R"({"quant_method":"fp8","weight_block_size":[128,128]})"}) {
    WriteFile(dir / "config.json", std::string(kTiny) + R"(,"quantization_config":)" + quant + "}");
    s = ReadModelPath(dir.path());
    ASSERT_TRUE(s.ok()) << EnglishText(s.error().what);
    EXPECT_TRUE(s->exact_params.has_value()) << quant;
  }
  WriteFile(dir / "config.json",
            std::string(kTiny) +
                R"(,"quantization_config":{"quant_method":"bitsandbytes","load_in_4bit":true}})");
  EXPECT_FALSE(ReadModelPath(dir.path()).value().exact_params.has_value());
}

TEST(HfConfigTest, HeadersInconsistentWithTheConfigAreNotUsed) {
  // Regression: a partial download (one tiny shard beside the config) replaced config.json's
  // count; a header holding only __metadata__ gave "0 parameters".
  TempDir dir("hf");
  WriteFile(dir / "config.json", std::string(kTiny) + "}");
  WriteShard(dir / "model.safetensors", {{"lm_head.bias", "F32", {16}}});
  std::optional<uint64_t> ignored;
  Result<ModelSpec> s = ReadModelPath(dir.path(), &ignored);
  ASSERT_TRUE(s.ok()) << EnglishText(s.error().what);
  EXPECT_EQ(ignored, 16u);
  EXPECT_FALSE(s->exact_params.has_value());
  EXPECT_FALSE(s->checkpoint_bytes.has_value());
  EXPECT_TRUE(s->stored_dtype_params.empty());
  EXPECT_EQ(TotalParams(*s), 106'816u);  // config.json's

  WriteSafetensors(dir / "model.safetensors", R"({"__metadata__":{"format":"pt"}})", 0);
  ignored.reset();
  s = ReadModelPath(dir.path(), &ignored);
  ASSERT_TRUE(s.ok()) << EnglishText(s.error().what);
  EXPECT_EQ(ignored, 0u);
  EXPECT_EQ(TotalParams(*s), 106'816u);

  // Three times the config's count is another model's checkpoint as well.
  WriteShard(dir / "model.safetensors", {{"w", "BF16", {3 * 106'816}}});
  ignored.reset();
  s = ReadModelPath(dir.path(), &ignored);
  ASSERT_TRUE(s.ok()) << EnglishText(s.error().what);
  EXPECT_EQ(ignored, 3u * 106'816u);
  EXPECT_EQ(TotalParams(*s), 106'816u);

  // Within [1/2, 2]: taken, as for a real folder (ReadsAModelFolderWithShards).
  WriteShard(dir / "model.safetensors", {{"w", "BF16", {106'816 + 1000}}});
  ignored.reset();
  s = ReadModelPath(dir.path(), &ignored);
  ASSERT_TRUE(s.ok()) << EnglishText(s.error().what);
  EXPECT_FALSE(ignored.has_value());
  EXPECT_EQ(s->exact_params, 106'816u + 1000u);
}

TEST(HfConfigTest, ModelPathErrors) {
  TempDir dir("hf");
  const std::string config = (dir / "config.json").string();
  EXPECT_EQ(EnglishText(ReadModelPath(dir.path()).error().what),
            config + ": open: No such file or directory");
  EXPECT_NE(EnglishText(ReadModelPath(dir / "absent").error().what).find("absent: No such file"),
            std::string::npos);
  WriteFile(dir / "config.json", "{\"hidden_size\": -4}");
  EXPECT_EQ(EnglishText(ReadModelPath(dir.path()).error().what),
            config + ": hidden_size must be a positive integer, got -4");
  // A config.json over the cap (a sparse file) is refused before it is read.
  WriteSafetensors(dir / "config.json", "", kMaxHfConfigBytes);
  EXPECT_EQ(EnglishText(ReadModelPath(dir.path()).error().what),
            fmt::format("{}: file is {} bytes, over the {}-byte limit", config,
                        kMaxHfConfigBytes + 8, kMaxHfConfigBytes));
  // A FIFO named config.json must not hang the reader.
  std::filesystem::remove(dir / "config.json");
  ASSERT_EQ(::mkfifo(config.c_str(), 0600), 0);
  EXPECT_EQ(EnglishText(ReadModelPath(dir.path()).error().what), config + ": not a regular file");
  std::filesystem::remove(dir / "config.json");
  // Shards: an index that leaves the folder, a missing shard, a broken header.
  WriteTinyLlama(dir);
  WriteFile(dir / "model.safetensors.index.json", R"({"weight_map":{"a":"../../etc/passwd"}})");
  EXPECT_EQ(EnglishText(ReadModelPath(dir.path()).error().what),
            (dir / "model.safetensors.index.json").string() +
                ": shard path \"../../etc/passwd\" leaves the model folder");
  WriteFile(dir / "model.safetensors.index.json",
            R"({"weight_map":{"a":"model-00003-of-00002.safetensors"}})");
  EXPECT_EQ(
      EnglishText(ReadModelPath(dir.path()).error().what),
      (dir / "model-00003-of-00002.safetensors").string() + ": open: No such file or directory");
  std::filesystem::remove(dir / "model.safetensors.index.json");
  WriteFile(dir / "model.safetensors", testing::LengthPrefix(1ULL << 62));
  EXPECT_EQ(EnglishText(ReadModelPath(dir.path()).error().what),
            (dir / "model.safetensors").string() +
                ": header length 4611686018427387904 is larger than the file (8 bytes)");
}

}  // namespace
}  // namespace headroom
