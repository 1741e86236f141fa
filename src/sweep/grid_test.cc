#include "sweep/grid.h"

#include <gtest/gtest.h>

#include "base/message.h"

namespace headroom {
namespace {

TEST(SweepGrid, RangesDoubleAndEndAtTheTop) {
  auto k = ParseKnob("batch", "--batch", "1..64");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->values, (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64}));
  auto odd = ParseKnob("batch", "--batch", "3..40");
  ASSERT_TRUE(odd.ok());
  EXPECT_EQ(odd->values, (std::vector<int64_t>{3, 6, 12, 24, 40}));
  EXPECT_EQ(odd->Between(6, 12), (std::vector<int64_t>{7, 8, 9, 10, 11}));
}

TEST(SweepGrid, StepsKeepEveryValueOnTheLattice) {
  auto k = ParseKnob("seq", "--seq", "512..8192:512");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->values, (std::vector<int64_t>{512, 1024, 2048, 4096, 8192}));
  EXPECT_EQ(k->Between(2048, 4096), (std::vector<int64_t>{2560, 3072, 3584}));
  EXPECT_FALSE(ParseKnob("seq", "--seq", "512..1000:512").ok());
}

TEST(SweepGrid, ListsAreSortedAndOnlyTheirValuesAreBetween) {
  auto k = ParseKnob("batch", "--batch", "8,1,4,4");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->values, (std::vector<int64_t>{1, 4, 8}));
  EXPECT_EQ(k->Between(1, 8), (std::vector<int64_t>{4}));
}

TEST(SweepGrid, HostileValuesAreOneLineErrorsNamingTheFlag) {
  for (const char* bad : {"", "0..4", "4..1", "1..", "..4", "a,b", "1,,2", "-1", "1.5", "1..4:0",
                          "99999999999999999999", "1..2000000000", "1, 2"}) {
    auto k = ParseKnob("batch", "--batch", bad);
    ASSERT_FALSE(k.ok()) << bad;
    EXPECT_EQ(EnglishText(k.error().what).rfind("--batch: ", 0), 0u) << EnglishText(k.error().what);
    EXPECT_EQ(EnglishText(k.error().what).find('\n'), std::string::npos);
  }
  EXPECT_FALSE(ParseParamKnob("lora_r").ok());
  EXPECT_FALSE(ParseParamKnob("Bad=1,2").ok());
  EXPECT_FALSE(ParseParamKnob("batch=1,2").ok());
  auto p = ParseParamKnob("lora_r=8,16");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->name, "lora_r");
  EXPECT_EQ(p->flag, "--param lora_r");
}

TEST(SweepGrid, TemplatesAreFilledAndChecked) {
  auto b = ParseKnob("batch", "--batch", "1..4");
  auto s = ParseKnob("seq", "--seq", "1024");
  ASSERT_TRUE(b.ok() && s.ok());
  auto g = OrderGrid({*b, *s}, "seq,batch");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->knobs[0].name, "seq");
  const std::vector<std::string> cmd = {"train", "--bs={batch}",   "--len", "{seq}",
                                        "--tag", "b{batch}s{seq}", "{x"};
  EXPECT_TRUE(CheckTemplate(*g, cmd).ok());
  Config c = g->Smallest();
  c.Set("batch", 4);
  EXPECT_EQ(FillTemplate(cmd, c), (std::vector<std::string>{"train", "--bs=4", "--len", "1024",
                                                            "--tag", "b4s1024", "{x"}));
  EXPECT_EQ(c.ToJson(), R"({"seq":1024,"batch":4})");
  EXPECT_EQ(c.ToText(), "seq=1024 batch=4");

  auto missing = CheckTemplate(*g, {"train", "{batch}"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(EnglishText(missing.error().what),
            "--seq is given but the command has no {seq} to fill");
  auto extra = CheckTemplate(*g, {"train", "{batch}", "{seq}", "{grad_accum}"});
  ASSERT_FALSE(extra.ok());
  EXPECT_EQ(EnglishText(extra.error().what),
            "the command has {grad_accum} but no values for it: give --grad-accum");
  EXPECT_FALSE(OrderGrid({*b}, "seq").ok());
}

// The flags, the rest not given (grad_accum is never given here).
SweepGridFlags Flags(std::string batch, std::string seq = "", std::vector<std::string> params = {},
                     std::string order = "") {
  SweepGridFlags f;
  f.batch = std::move(batch);
  f.seq = std::move(seq);
  f.params = std::move(params);
  f.order = std::move(order);
  return f;
}

TEST(SweepGrid, FlagsBuildTheGridInFlagOrderThenOrderAndCheckIt) {
  const std::vector<std::string> cmd = {"train", "{batch}", "{seq}", "{lora_r}"};
  auto g = BuildSweepGrid(Flags("1..4", "1024", {"lora_r=8,16"}), cmd);
  ASSERT_TRUE(g.ok()) << EnglishText(g.error().what);
  ASSERT_EQ(g->knobs.size(), 3u);
  EXPECT_EQ(g->knobs[0].name, "batch");
  EXPECT_EQ(g->knobs[1].name, "seq");
  EXPECT_EQ(g->knobs[2].name, "lora_r");
  auto ordered = BuildSweepGrid(Flags("1..4", "1024", {"lora_r=8,16"}, "lora_r"), cmd);
  ASSERT_TRUE(ordered.ok());
  EXPECT_EQ(ordered->knobs[0].name, "lora_r");

  auto none = BuildSweepGrid(Flags(""), cmd);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(EnglishText(none.error().what),
            "nothing to sweep: give --batch, --seq, --grad-accum or --param");
  auto twice = BuildSweepGrid(Flags("1..4", "", {"x=1,2", "x=3"}), {"t", "{batch}", "{x}"});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(EnglishText(twice.error().what), "--param x: given twice");
  auto bad = BuildSweepGrid(Flags("0..4"), {"t", "{batch}"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(EnglishText(bad.error().what).rfind("--batch: ", 0), 0u);
  auto unfilled = BuildSweepGrid(Flags("1..4", "8"), {"t", "{batch}"});
  ASSERT_FALSE(unfilled.ok());
  EXPECT_EQ(EnglishText(unfilled.error().what),
            "--seq is given but the command has no {seq} to fill");
}

}  // namespace
}  // namespace headroom
