#include "base/yaml_tree.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace headroom {
namespace {

TEST(YamlTree, ReadsMapsSequencesScalarsAndLines) {
  auto tree = ParseYaml("a: 1\nb:\n  - x\n  - 'y'\nc:\n  d: null\ne:\n");
  ASSERT_TRUE(tree) << EnglishText(tree.error().what);
  ASSERT_EQ(tree->kind, YamlNode::Kind::kMap);
  ASSERT_EQ(tree->members.size(), 4u);
  EXPECT_EQ(tree->members[0].key, "a");  // the file's order
  EXPECT_EQ(tree->Find("a")->scalar, "1");
  EXPECT_FALSE(tree->Find("a")->quoted);
  const YamlNode* b = tree->Find("b");
  ASSERT_EQ(b->kind, YamlNode::Kind::kSequence);
  ASSERT_EQ(b->items.size(), 2u);
  EXPECT_TRUE(b->items[1].quoted);
  EXPECT_EQ(b->items[1].scalar, "y");
  EXPECT_EQ(b->line, 3);
  EXPECT_TRUE(tree->Find("c")->Find("d")->IsNull());
  EXPECT_TRUE(tree->Find("e")->IsNull());
  EXPECT_EQ(tree->Find("missing"), nullptr);
}

TEST(YamlTree, ReadsJsonWithTabs) {
  auto tree = ParseYaml("{\n\t\"zero_optimization\": {\"stage\": 3},\n\t\"x\": [1, 2]\n}\n");
  ASSERT_TRUE(tree) << EnglishText(tree.error().what);
  EXPECT_EQ(tree->Find("zero_optimization")->Find("stage")->scalar, "3");
  EXPECT_EQ(tree->Find("x")->items.size(), 2u);
}

TEST(YamlTree, CopiesAnAliasWithinTheBudget) {
  auto tree = ParseYaml("base: &b {rank: 8}\nother: *b\n");
  ASSERT_TRUE(tree) << EnglishText(tree.error().what);
  EXPECT_EQ(tree->Find("other")->Find("rank")->scalar, "8");
}

TEST(YamlTree, RefusesAnAliasBombQuickly) {
  // Nine levels of ten aliases each: 10^9 nodes if expanded.
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    const char p = static_cast<char>(c - 1);
    bomb += fmt::format("{0}: &{0} [*{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}]\n",
                        c, p);
  }
  const auto start = std::chrono::steady_clock::now();
  auto tree = ParseYaml(bomb);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(tree);
  EXPECT_NE(EnglishText(tree.error().what).find("more than 100000 YAML nodes"), std::string::npos)
      << EnglishText(tree.error().what);
  EXPECT_LT(took, std::chrono::seconds(2));
}

TEST(YamlTree, RefusesAnAliasThatRepeatsALongScalar) {
  // Issue 29's file: 612 KB, whose 4,000 aliases to one 600,000-byte scalar were 2.4 GB.
  std::string text = "base_model: x\nbig: &b " + std::string(600'000, 'A') + "\nrefs: [";
  for (int i = 0; i < 4000; ++i) text += i == 0 ? "*b" : ",*b";
  text += "]\n";
  auto tree = ParseYaml(text);
  ASSERT_FALSE(tree);
  EXPECT_EQ(EnglishText(tree.error().what),
            "line 3: the text expands to more than 4194304 bytes (aliases count once per use)");
  // A few uses of a long scalar stay within the budget.
  std::string few = "big: &b " + std::string(600'000, 'A') + "\nrefs: [*b, *b, *b]\n";
  auto ok = ParseYaml(few);
  ASSERT_TRUE(ok) << EnglishText(ok.error().what);
  EXPECT_EQ(ok->Find("refs")->items[2].scalar.size(), 600'000u);
  // Keys count as text too, and an anchored map is charged once per alias.
  auto keys = ParseYaml("a: &m {" + std::string(1000, 'k') + ": 1}\nb: [*m, *m]\n",
                        YamlLimits{.max_bytes = 3000});
  ASSERT_FALSE(keys);
  EXPECT_NE(EnglishText(keys.error().what).find("more than 3000 bytes"), std::string::npos);
}

TEST(YamlTree, ChecksManyKeysForDuplicates) {
  // 49,000 keys: the size that took 10 s when each key was compared with every earlier one.
  std::string text;
  for (int i = 0; i < 49'000; ++i) text += fmt::format("k{}: {}\n", i, i);
  auto tree = ParseYaml(text);
  ASSERT_TRUE(tree) << EnglishText(tree.error().what);
  ASSERT_EQ(tree->members.size(), 49'000u);
  EXPECT_EQ(tree->members[48'999].key, "k48999");
  EXPECT_EQ(tree->Find("k12345")->scalar, "12345");
  auto twice = ParseYaml(text + "k17: again\n");
  ASSERT_FALSE(twice);
  EXPECT_EQ(EnglishText(twice.error().what), "line 49001: key 'k17' given twice");
  // The same key in two maps is no duplicate.
  EXPECT_TRUE(ParseYaml("a: {x: 1}\nb: {x: 2}\n"));
}

TEST(YamlTree, RefusesDeepNestingNamingTheLine) {
  std::string deep;
  for (int i = 0; i < 40; ++i) deep += std::string(i * 2, ' ') + "k:\n";
  deep += std::string(80, ' ') + "v\n";
  auto flow = ParseYaml(std::string(5000, '[') + std::string(5000, ']'));
  ASSERT_FALSE(flow);
  EXPECT_NE(EnglishText(flow.error().what).find("nested deeper than 32"), std::string::npos);
  auto block = ParseYaml(deep);
  ASSERT_FALSE(block);
  EXPECT_EQ(EnglishText(block.error().what).rfind("line 33: nested deeper", 0), 0u)
      << EnglishText(block.error().what);
}

TEST(YamlTree, RefusesDuplicateAndComplexKeys) {
  auto twice = ParseYaml("lora_r: 8\nlora_r: 16\n");
  ASSERT_FALSE(twice);
  EXPECT_EQ(EnglishText(twice.error().what), "line 2: key 'lora_r' given twice");
  auto complex = ParseYaml("? [a, b]\n: 1\n");
  ASSERT_FALSE(complex);
  EXPECT_NE(EnglishText(complex.error().what).find("a key that is a sequence"), std::string::npos);
}

TEST(YamlTree, BrokenAndEmptyTextAreErrorsWithALine) {
  auto broken = ParseYaml("a: [1, 2\nb: 3\n");
  ASSERT_FALSE(broken);
  EXPECT_NE(EnglishText(broken.error().what).find("not YAML"), std::string::npos);
  EXPECT_EQ(EnglishText(broken.error().what).rfind("line ", 0), 0u);
  auto empty = ParseYaml("");
  ASSERT_FALSE(empty);
  EXPECT_EQ(EnglishText(empty.error().what), "no YAML document (the file is empty)");
  auto nul = ParseYaml(std::string("a: \0\x01\xff", 6));
  EXPECT_TRUE(nul || !EnglishText(nul.error().what).empty());
}

}  // namespace
}  // namespace headroom
