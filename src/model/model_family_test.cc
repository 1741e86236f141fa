#include "model/model_family.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/catalog.h"

namespace headroom {
namespace {

std::vector<std::string> SmallerNames(std::string_view model) {
  std::vector<std::string> out;
  for (const ModelSpec* m : SmallerInFamily(*FindModel(model))) out.push_back(m->name);
  return out;
}

TEST(ModelFamily, EveryCatalogModelHasOne) {
  for (const ModelSpec& m : Catalog()) EXPECT_FALSE(ModelFamily(m).empty()) << m.name;
}

// model_type puts Llama 2, TinyLlama and SmolLM2 beside Llama 3 ("llama"); the family does not.
TEST(ModelFamily, LlamaThreeIsOneFamilyApartFromLlamaTwoAndTinyLlama) {
  EXPECT_EQ(ModelFamily(*FindModel("llama-3.1-8b")), "llama-3");
  EXPECT_EQ(ModelFamily(*FindModel("llama-3.2-3b")), "llama-3");
  EXPECT_EQ(ModelFamily(*FindModel("llama-3-70b")), "llama-3");
  EXPECT_EQ(ModelFamily(*FindModel("llama-2-7b")), "llama-2");
  EXPECT_EQ(ModelFamily(*FindModel("tinyllama-1.1b")), "tinyllama");
  EXPECT_EQ(ModelFamily(*FindModel("smollm2-1.7b")), "smollm2");
  EXPECT_EQ(SmallerNames("llama-3.1-8b"),
            (std::vector<std::string>{"llama-3.2-3b", "llama-3.2-1b"}));
  // Of the two 8B models, the one of the 70B's own series first.
  const auto below_70b = SmallerNames("llama-3.1-70b");
  ASSERT_GE(below_70b.size(), 2u);
  EXPECT_EQ(below_70b[0], "llama-3.1-8b");
  EXPECT_EQ(below_70b[1], "llama-3-8b");
  // A name as the Hub spells it is the same model.
  ModelSpec hub = *FindModel("llama-3.1-8b");
  hub.name = "meta-llama/Llama-3.1-8B-Instruct";
  EXPECT_EQ(ModelFamily(hub), "llama-3");
}

TEST(ModelFamily, MixtureOfExpertsIsItsOwnFamily) {
  EXPECT_EQ(ModelFamily(*FindModel("qwen3-8b")), "qwen3");
  EXPECT_EQ(ModelFamily(*FindModel("qwen3-30b-a3b")), "qwen3-moe");
  EXPECT_TRUE(SmallerNames("qwen3-30b-a3b").empty());
  EXPECT_EQ(SmallerNames("qwen3-235b-a22b"), (std::vector<std::string>{"qwen3-30b-a3b"}));
}

TEST(ModelFamily, TheSmallestMemberOrAnUnknownModelHasNoneSmaller) {
  EXPECT_TRUE(SmallerNames("llama-3.2-1b").empty());
  EXPECT_TRUE(SmallerNames("tinyllama-1.1b").empty());
  EXPECT_EQ(SmallerNames("gemma-3-4b"), (std::vector<std::string>{"gemma-3-1b"}));
  ModelSpec custom = *FindModel("llama-3.1-8b");
  custom.name = "my-own-model";
  EXPECT_EQ(ModelFamily(custom), "");
  EXPECT_TRUE(SmallerInFamily(custom).empty());
}

}  // namespace
}  // namespace headroom
