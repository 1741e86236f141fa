// Catalog tests: every row is a valid spec whose computed parameter count is within 1 % of
// the publisher's count, a few counts are checked against sums done by hand from the
// config.json shapes, and name lookup tolerates what users actually type.
#include "model/catalog.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

namespace headroom {
namespace {

const ModelSpec& Get(std::string_view name) {
  const ModelSpec* spec = FindModel(name);
  EXPECT_NE(spec, nullptr) << name;
  static const ModelSpec kEmpty;
  return spec != nullptr ? *spec : kEmpty;
}

TEST(CatalogTest, EveryEntryIsValidAndWithinOnePercentOfPublished) {
  for (const ModelSpec& entry : Catalog()) {
    ModelSpec copy = entry;
    EXPECT_EQ(EnglishText(CompleteAndValidate(&copy)), "") << entry.name;
    ASSERT_GT(entry.published_params, 0u) << entry.name;
    EXPECT_FALSE(entry.published_source.empty()) << entry.name;
    const uint64_t computed = ArchitectureParams(entry);
    const double ratio =
        static_cast<double>(computed) / static_cast<double>(entry.published_params);
    EXPECT_NEAR(ratio, 1.0, 0.01) << entry.name << ": computed " << computed << ", published "
                                  << entry.published_params << " (" << entry.published_source
                                  << "), ratio " << ratio;
  }
}

TEST(CatalogTest, HasAtLeastThirtyUniqueNormalisedNames) {
  EXPECT_GE(Catalog().size(), 30u);
  std::set<std::string> seen;
  for (const ModelSpec& entry : Catalog()) {
    EXPECT_TRUE(seen.insert(entry.name).second) << "duplicate " << entry.name;
    EXPECT_EQ(NormalizeModelName(entry.name), entry.name);
    EXPECT_EQ(FindModel(entry.name), &entry) << entry.name;
    EXPECT_FALSE(entry.family.empty()) << entry.name;
  }
}

TEST(CatalogTest, EntriesOfOneFamilyAreContiguous) {
  std::set<std::string> finished;
  std::string current;
  for (const ModelSpec& entry : Catalog()) {
    if (entry.family == current) continue;
    EXPECT_EQ(finished.count(entry.family), 0u) << entry.family << " resumes at " << entry.name;
    finished.insert(current);
    current = entry.family;
  }
}

// The models the calibration data (bench/data/README.md) and docs/sources.md name.
constexpr const char* kRequired[] = {"llama-3.1-8b",
                                     "llama-3.1-70b",
                                     "llama-3.1-405b",
                                     "llama-3.2-1b",
                                     "llama-3.2-3b",
                                     "llama-3.3-70b",
                                     "llama-2-7b",
                                     "llama-2-13b",
                                     "llama-3-8b",
                                     "qwen2.5-0.5b",
                                     "qwen2.5-1.5b",
                                     "qwen2.5-3b",
                                     "qwen2.5-7b",
                                     "qwen2.5-14b",
                                     "qwen2.5-32b",
                                     "qwen2.5-72b",
                                     "qwen3-0.6b",
                                     "qwen3-1.7b",
                                     "qwen3-4b",
                                     "qwen3-8b",
                                     "qwen3-14b",
                                     "qwen3-32b",
                                     "qwen3-30b-a3b",
                                     "qwen3-235b-a22b",
                                     "mistral-7b",
                                     "mixtral-8x7b",
                                     "gemma-2-2b",
                                     "gemma-2-9b",
                                     "gemma-2-27b",
                                     "gemma-3-1b",
                                     "gemma-3-4b",
                                     "gemma-3-12b",
                                     "gemma-3-27b",
                                     "phi-3-mini",
                                     "phi-3-medium",
                                     "phi-3.5-mini",
                                     "phi-3.5-moe",
                                     "phi-4",
                                     "gpt-oss-20b",
                                     "gpt-oss-120b",
                                     "phi-1.5",
                                     "falcon-7b",
                                     "stablelm-base-alpha-3b",
                                     "bloomz-7b1"};

TEST(CatalogTest, RequiredModelsArePresent) {
  for (const char* name : kRequired) EXPECT_NE(FindModel(name), nullptr) << name;
}

TEST(CatalogTest, NormalisesWhatUsersType) {
  EXPECT_EQ(NormalizeModelName("Llama_3.1_70B-Instruct"), "llama-3.1-70b");
  EXPECT_EQ(NormalizeModelName("llama-3.1-70B-instruct"), "llama-3.1-70b");
  EXPECT_EQ(NormalizeModelName("meta-llama/Llama-3.1-70B-Instruct"), "llama-3.1-70b");
  EXPECT_EQ(NormalizeModelName("Llama 3.1 70B"), "llama-3.1-70b");
  EXPECT_EQ(NormalizeModelName("Llama-2-7b-chat-hf"), "llama-2-7b");
  EXPECT_EQ(NormalizeModelName("Qwen/Qwen3-30B-A3B-Instruct-2507"), "qwen3-30b-a3b");
  EXPECT_EQ(NormalizeModelName("mistralai/Mistral-7B-Instruct-v0.3"), "mistral-7b");
  EXPECT_EQ(NormalizeModelName("microsoft/Phi-3-mini-4k-instruct"), "phi-3-mini");
  EXPECT_EQ(NormalizeModelName("something-new"), "something-new");
}

TEST(CatalogTest, FindsByUserTypedNames) {
  const ModelSpec* llama70 = FindModel("llama-3.1-70b");
  ASSERT_NE(llama70, nullptr);
  EXPECT_EQ(FindModel("Llama_3.1_70B-Instruct"), llama70);
  EXPECT_EQ(FindModel("llama-3.1-70B-instruct"), llama70);
  EXPECT_EQ(FindModel("meta-llama/Llama-3.1-70B-Instruct"), llama70);
  EXPECT_EQ(Get("QWEN2.5_7B-Instruct").name, "qwen2.5-7b");
  EXPECT_EQ(Get("gemma-2-9b-it").name, "gemma-2-9b");
  EXPECT_EQ(Get("google/gemma-3-27b-it").name, "gemma-3-27b");
  EXPECT_EQ(Get("meta-llama/Meta-Llama-3-8B-Instruct").name, "llama-3-8b");
  EXPECT_EQ(Get("microsoft/phi-1_5").name, "phi-1.5");
  EXPECT_EQ(Get("microsoft/Phi-3.5-MoE-instruct").name, "phi-3.5-moe");
  EXPECT_EQ(Get("mistralai/Mistral-Nemo-Instruct-2407").name, "mistral-nemo-12b");
  EXPECT_EQ(Get("openai/gpt-oss-120b").name, "gpt-oss-120b");
  EXPECT_EQ(Get("tiiuae/falcon-7b").name, "falcon-7b");
  EXPECT_EQ(FindModel("llama-3.1-7b"), nullptr);
  EXPECT_EQ(FindModel("no-such-model"), nullptr);
  EXPECT_EQ(FindModel(""), nullptr);
}

TEST(CatalogTest, SuggestsClosestNames) {
  const std::vector<std::string> near = ClosestModelNames("llama-3.1-7b");
  ASSERT_EQ(near.size(), 3u);
  auto has = [&](const char* n) { return std::find(near.begin(), near.end(), n) != near.end(); };
  EXPECT_TRUE(has("llama-3.1-8b"));
  EXPECT_TRUE(has("llama-3.1-70b"));
  EXPECT_EQ(ClosestModelNames("QWEN2.5_7B-Instruct", 1), std::vector<std::string>{"qwen2.5-7b"});
  EXPECT_EQ(ClosestModelNames("x", 1000).size(), Catalog().size());
  EXPECT_TRUE(ClosestModelNames("x", 0).empty());
}

// 32 layers of q 4096x4096, k and v 4096x1024, o 4096x4096, gate/up/down 4096x14336 and
// two 4096 RMSNorms; 128256x4096 embeddings, an untied lm_head of the same size, one final
// norm: the safetensors total that meta-llama/Llama-3.1-8B publishes.
TEST(CatalogTest, Llama31_8bMatchesHandCount) {
  const uint64_t layer = 2 * 4096ull * 4096 + 2 * 4096ull * 1024 + 3 * 4096ull * 14336 + 2 * 4096;
  const uint64_t expected = 2 * 128256ull * 4096 + 32 * layer + 4096;
  EXPECT_EQ(expected, 8'030'261'248u);
  EXPECT_EQ(ArchitectureParams(Get("llama-3.1-8b")), expected);
}

// Qwen2.5-0.5B: tied 151936x896 embeddings; 24 layers of q 896x896 and o 896x896 (14 heads
// of 64), k and v 896x128 (2 kv heads), biases on q, k, v only (896 + 128 + 128), MLP
// 3 x 896x4864, two norms; final norm.
TEST(CatalogTest, Qwen25_05bMatchesHandCount) {
  const uint64_t layer =
      2 * 896ull * 896 + 2 * 896ull * 128 + (896 + 2 * 128) + 3 * 896ull * 4864 + 2 * 896;
  const uint64_t expected = 151936ull * 896 + 24 * layer + 896;
  EXPECT_EQ(expected, 494'032'768u);
  EXPECT_EQ(ArchitectureParams(Get("qwen2.5-0.5b")), expected);
}

// Mixtral-8x7B: Llama-shaped attention, 8 experts of 3 x 4096x14336 per layer with a 4096x8
// router, untied 32000x4096 embeddings. Two experts run per token: about 12.9B active.
TEST(CatalogTest, Mixtral8x7bTotalAndActive) {
  const ModelSpec& mixtral = Get("mixtral-8x7b");
  const uint64_t attention = 2 * 4096ull * 4096 + 2 * 4096ull * 1024;
  const uint64_t expert = 3 * 4096ull * 14336;
  const uint64_t small = 2 * 4096 + 4096 * 8;  // norms and router
  const uint64_t embeddings = 2 * 32000ull * 4096;
  EXPECT_EQ(embeddings + 32 * (attention + 8 * expert + small) + 4096, 46'702'792'704u);
  EXPECT_EQ(ArchitectureParams(mixtral), 46'702'792'704u);
  const uint64_t active = ActiveParams(mixtral);
  EXPECT_EQ(active, embeddings + 32 * (attention + 2 * expert + small));
  EXPECT_NEAR(static_cast<double>(active) / 1e9, 12.9, 0.05);
}

// The vision tower is what separates Gemma 3's text config from its published count.
TEST(CatalogTest, Gemma3CarriesItsVisionTower) {
  EXPECT_EQ(Get("gemma-3-1b").extra_params, 0);
  const ModelSpec& g4 = Get("gemma-3-4b");
  EXPECT_EQ(g4.extra_params, 416'866'032 + 1152 * 2560 + 1152);
  EXPECT_EQ(ArchitectureParams(g4), g4.published_params);
}

TEST(CatalogTest, MoeEntriesHaveActiveBelowTotal) {
  for (const ModelSpec& entry : Catalog()) {
    if (entry.num_experts == 0) continue;
    EXPECT_LT(ActiveParams(entry), ArchitectureParams(entry)) << entry.name;
    EXPECT_GT(entry.moe_intermediate_size, 0) << entry.name;
  }
  EXPECT_NEAR(static_cast<double>(ActiveParams(Get("qwen3-30b-a3b"))) / 1e9, 3.3, 0.1);
  EXPECT_NEAR(static_cast<double>(ActiveParams(Get("qwen3-235b-a22b"))) / 1e9, 22.2, 0.2);
}

}  // namespace
}  // namespace headroom

namespace headroom {
namespace {

TEST(ModelSpecValidation, RejectsArchitecturesThatWouldOverflow) {
  ModelSpec s;
  s.hidden_size = 1 << 24;
  s.num_layers = 1 << 16;
  s.num_heads = 1 << 12;
  s.head_dim = 1 << 12;
  s.intermediate_size = 1 << 24;
  s.vocab_size = 1 << 20;
  EXPECT_NE(EnglishText(CompleteAndValidate(&s)).find("10^15"), std::string::npos);
  ModelSpec ok = *FindModel("llama-3.1-405b");
  EXPECT_EQ(EnglishText(CompleteAndValidate(&ok)), "");
  ModelSpec neg = ok;
  neg.extra_params = -1;
  EXPECT_NE(EnglishText(CompleteAndValidate(&neg)), "");
}

}  // namespace
}  // namespace headroom
