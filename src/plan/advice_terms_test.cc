#include "plan/advice_terms.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "base/bytes.h"
#include "model/catalog.h"
#include "plan/verdict.h"

namespace headroom {
namespace {

const Advice* Step(const std::vector<Advice>& advice, std::string_view step) {
  for (const Advice& a : advice) {
    if (a.step == step) return &a;
  }
  return nullptr;
}

uint64_t PeakOf(std::string_view model, const Workload& w) {
  return ComputeFootprint(*FindModel(model), w).peak_bytes();
}

bool Has(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

// A Llama 3.1 8B LoRA whose budget a Llama 2 7B would fit: the advice is the next Llama 3
// size down (3.2 3B), not the older generation nor TinyLlama.
TEST(ModelAdvice, ProposesTheSameFamilyOneSizeDown) {
  Workload w;
  w.batch = 4;
  w.seq = 4096;
  // Llama 2 7B's 32000-token vocabulary makes its logits smaller than the 3B's: it fits too.
  const uint64_t llama2 = PeakOf("llama-2-7b", w);
  const uint64_t three = PeakOf("llama-3.2-3b", w);
  const uint64_t target = std::max(llama2, three) + 1'000'000'000ULL;
  ASSERT_LT(target, PeakOf("llama-3.1-8b", w));
  const auto advice = AdviseWithinBudget(*FindModel("llama-3.1-8b"), w, target * 10 / 9, {});
  const Advice* model = Step(advice, "model");
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->model, "llama-3.2-3b") << EnglishText(model->text);
  EXPECT_EQ(model->peak_bytes, PeakOf("llama-3.2-3b", w));
}

// Llama 3.2 1B is the smallest of its family: the advice names the largest term, the logits of
// a standard loss at 8 x 4096 tokens, and the flag that cuts them.
TEST(ModelAdvice, WithNoSmallerMemberNamesTheLargestTermAndItsFlag) {
  Workload w;
  w.batch = 8;
  w.seq = 4096;
  const Footprint f = ComputeFootprint(*FindModel("llama-3.2-1b"), w);
  const auto advice = AdviseWithinBudget(*FindModel("llama-3.2-1b"), w, 1'000'000'000ULL, {});
  const Advice* model = Step(advice, "model");
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->model, "");
  EXPECT_EQ(EnglishText(model->text),
            "no smaller model of its family in the catalog: the largest term is logits and loss "
            "(standard) (" +
                FormatGB(f.logits_bytes) + "); --loss fused cuts it");
  // A family with smaller members, none of which fits: said so, with the same term.
  const auto eight = AdviseWithinBudget(*FindModel("llama-3.1-8b"), w, 1'000'000'000ULL, {});
  const Advice* none = Step(eight, "model");
  ASSERT_NE(none, nullptr);
  EXPECT_TRUE(Has(EnglishText(none->text),
                  "no smaller llama-3 model in the catalog fits: the "
                  "largest term is logits and loss (standard)"))
      << EnglishText(none->text);
}

TEST(ModelAdvice, TheFlagFollowsTheTermAndTheWorkload) {
  Workload full;
  full.method = Method::kFull;
  EXPECT_EQ(FlagThatCuts("weights", full), "--method qlora");
  EXPECT_EQ(FlagThatCuts("gradients", full), "--method lora");
  EXPECT_EQ(FlagThatCuts("optimizer", full), "--optimizer adamw-8bit");
  full.optimizer = Optimizer::kAdamW8bit;
  EXPECT_EQ(FlagThatCuts("optimizer", full), "--method lora");
  Workload lora;
  EXPECT_EQ(FlagThatCuts("logits", lora), "--loss fused");
  lora.loss = LossKind::kFused;
  EXPECT_EQ(FlagThatCuts("logits", lora), "--seq, --batch");
  lora.grad_ckpt = false;
  EXPECT_EQ(FlagThatCuts("layer_activations", lora), "--grad-ckpt on");
  Workload qlora;
  qlora.method = Method::kQlora;
  EXPECT_EQ(FlagThatCuts("weights", qlora), "--devices 2 --sharding fsdp");
  EXPECT_TRUE(TermDependsOnSeq("logits"));
  EXPECT_TRUE(TermDependsOnSeq("layer_activations"));
  EXPECT_FALSE(TermDependsOnSeq("weights"));
  EXPECT_FALSE(TermDependsOnSeq("optimizer"));
}

// A full fine-tune of Llama 3.1 8B at 16 x 4096: the logits are the largest term and depend
// on --seq, yet even --seq 1 leaves the weights, gradients and states over the target. The
// advice says both: what --seq moves, and what is over that it does not.
TEST(SeqAdvice, SaysWhatSeqMovesAndWhatStaysOver) {
  Workload w;
  w.method = Method::kFull;
  w.weight_dtype = DefaultWeightDType(Method::kFull);
  w.batch = 16;
  w.seq = 4096;
  const ModelSpec& spec = *FindModel("llama-3.1-8b");
  const Footprint f = ComputeFootprint(spec, w);
  uint64_t largest = 0;
  for (const FootprintTerm& t : f.terms) largest = std::max(largest, t.bytes);
  ASSERT_EQ(largest, f.logits_bytes);  // the case of the report: the logits lead
  const uint64_t budget = 60'000'000'000ULL;
  const auto advice = AdviseWithinBudget(spec, w, budget, {});
  ASSERT_FALSE(advice.empty());
  ASSERT_EQ(advice[0].step, "seq");
  EXPECT_FALSE(advice[0].value);
  Workload one = w;
  one.seq = 1;
  const Footprint at_one = ComputeFootprint(spec, one);
  const uint64_t target = budget * 9 / 10;
  ASSERT_GT(at_one.peak_bytes(), target);
  const std::string text = EnglishText(advice[0].text);
  EXPECT_TRUE(Has(text, "--seq moves the activations and logits (" +
                            FormatGB(f.layer_activations_bytes + f.logits_bytes) +
                            " at --seq 4096)"))
      << text;
  EXPECT_TRUE(Has(text, "even at --seq 1 the peak is " + FormatGB(at_one.peak_bytes()) + ", " +
                            FormatGB(at_one.peak_bytes() - target) + " over the " +
                            FormatGB(target) + " target"))
      << text;
  EXPECT_TRUE(Has(text, "the largest is optimizer (adamw)")) << text;
  EXPECT_FALSE(Has(text, "does not depend on it")) << text;
}

}  // namespace
}  // namespace headroom
