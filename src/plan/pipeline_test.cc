// Pipeline stages on literal inputs: the schedules' in-flight counts as PyTorch's schedules
// run them (docs/plan-formulas.md, "Pipeline stages"), and a small model's stages, each
// expectation computed here from the formula, not copied from the code's output.
#include "plan/pipeline.h"

#include <gtest/gtest.h>

#include <string>

#include "plan/footprint.h"
#include "plan/verdict.h"

namespace headroom {
namespace {

// A small Llama-shaped model: 4 layers, hidden 1024, 8 heads of 128, MLP 4096, vocabulary
// 1000, untied lm_head (or tied).
ModelSpec SmallModel(bool tied = false) {
  ModelSpec s;
  s.name = "small";
  s.family = "llama";
  s.hidden_size = 1024;
  s.num_layers = 4;
  s.num_heads = 8;
  s.num_kv_heads = 8;
  s.intermediate_size = 4096;
  s.vocab_size = 1000;
  s.tie_word_embeddings = tied;
  EXPECT_EQ(EnglishText(CompleteAndValidate(&s)), "");
  return s;
}

// Embeddings (and lm_head): 1000 x 1024 in bf16.
constexpr uint64_t kRootBytes = 1000ULL * 1024 * 2;

Workload FullMicro() {
  Workload w;
  w.method = Method::kFull;
  w.weight_dtype = DType::kBf16;
  w.batch = 1;
  w.seq = 128;
  return w;
}

PipelineConfig Config(Schedule s, int64_t n, int64_t m) { return {n, s, m}; }

TEST(PipelineSchedule, OneFOneBHoldsStagesToGo) {
  // Schedule1F1B: warm-up min(M, N - s) forwards, then a backward before each forward.
  EXPECT_EQ(InFlightMicrobatches(Config(Schedule::k1f1b, 2, 8), 0), 2);
  EXPECT_EQ(InFlightMicrobatches(Config(Schedule::k1f1b, 2, 8), 1), 1);
  EXPECT_EQ(InFlightMicrobatches(Config(Schedule::k1f1b, 4, 8), 0), 4);
  EXPECT_EQ(InFlightMicrobatches(Config(Schedule::k1f1b, 4, 8), 2), 2);
  EXPECT_EQ(InFlightMicrobatches(Config(Schedule::k1f1b, 4, 8), 3), 1);
}

TEST(PipelineSchedule, GpipeHoldsEveryMicrobatch) {
  EXPECT_EQ(InFlightMicrobatches(Config(Schedule::kGpipe, 2, 8), 0), 8);
  EXPECT_EQ(InFlightMicrobatches(Config(Schedule::kGpipe, 2, 8), 1), 8);
  EXPECT_EQ(InFlightLogits(Config(Schedule::kGpipe, 2, 8)), 8);
  EXPECT_EQ(InFlightLogits(Config(Schedule::k1f1b, 2, 8)), 1);
  EXPECT_EQ(InFlightLogits(Config(Schedule::kInterleaved, 2, 8)), 1);
}

TEST(PipelineSchedule, InterleavedWarmupPerVirtualStage) {
  // N 2, M 8: rounds max(1, 8 / 2) = 4, 2 per round, v = 2. Rank 0: warm-up
  // (2 - 1) x 2 + 2 x (2 - 1 - 0) = 4, one more in steady state: 5 virtual-stage activations,
  // each half the device's layers: 2.5 micro-batches' worth. Rank 1: 2 + 0 + 1 = 3: 1.5.
  EXPECT_EQ(InterleavedInFlightChunks(Config(Schedule::kInterleaved, 2, 8), 0), 5);
  EXPECT_EQ(InterleavedInFlightChunks(Config(Schedule::kInterleaved, 2, 8), 1), 3);
  EXPECT_DOUBLE_EQ(InFlightMicrobatches(Config(Schedule::kInterleaved, 2, 8), 0), 2.5);
  EXPECT_DOUBLE_EQ(InFlightMicrobatches(Config(Schedule::kInterleaved, 2, 8), 1), 1.5);
  // N 2, M 2: rounds 1, 2 per round; rank 0 warm-up 2 + 2 = 4 = M v, capped: all 4 alive.
  EXPECT_EQ(InterleavedInFlightChunks(Config(Schedule::kInterleaved, 2, 2), 0), 4);
}

TEST(PipelineSchedule, LayersSplitFirstStagesOneMore) {
  EXPECT_EQ(StageLayers(80, 2, 0), 40);
  EXPECT_EQ(StageLayers(80, 2, 1), 40);
  EXPECT_EQ(StageLayers(5, 2, 0), 3);
  EXPECT_EQ(StageLayers(5, 2, 1), 2);
  EXPECT_EQ(StageLayers(5, 3, 2), 1);
}

TEST(PipelineSchedule, RefusesWhatPyTorchRefuses) {
  EXPECT_TRUE(ScheduleRefusal(Config(Schedule::k1f1b, 2, 1)));
  EXPECT_FALSE(ScheduleRefusal(Config(Schedule::k1f1b, 2, 2)));
  // Interleaved N 2, M 5: rounds 2, 5 is not a multiple of 2.
  EXPECT_TRUE(ScheduleRefusal(Config(Schedule::kInterleaved, 2, 5)));
  EXPECT_FALSE(ScheduleRefusal(Config(Schedule::kInterleaved, 2, 3)));  // rounds 1
  EXPECT_FALSE(ScheduleRefusal(Config(Schedule::kGpipe, 4, 1)));
}

TEST(PipelineSchedule, ParsesNames) {
  EXPECT_EQ(ParseSchedule("1F1B").value(), Schedule::k1f1b);
  EXPECT_EQ(ParseSchedule("gpipe").value(), Schedule::kGpipe);
  EXPECT_EQ(ParseSchedule("interleaved").value(), Schedule::kInterleaved);
  EXPECT_FALSE(ParseSchedule("zb"));
}

TEST(PipelineStages, SplitTheSmallModelByLayers) {
  const ModelSpec s = SmallModel();
  const Workload w = FullMicro();
  const Footprint whole = ComputeFootprint(s, w);
  const PipelinePlan p =
      PlanPipeline(s, w, {}, Config(Schedule::kGpipe, 2, 4), 1'000'000'000'000ULL);
  ASSERT_EQ(p.stages.size(), 2U);
  const StageFootprint& a = p.stages[0];
  const StageFootprint& b = p.stages[1];
  EXPECT_TRUE(a.first && !a.last && b.last && !b.first);
  EXPECT_EQ(a.layers, 2);
  EXPECT_EQ(b.first_layer, 2);
  // Half the decoder each; the embeddings on the first, lm_head on the last.
  const uint64_t decoder = whole.weights_bytes - 2 * kRootBytes;
  EXPECT_NEAR(static_cast<double>(a.weights_bytes), static_cast<double>(decoder / 2 + kRootBytes),
              1);
  EXPECT_NEAR(static_cast<double>(b.weights_bytes), static_cast<double>(decoder / 2 + kRootBytes),
              1);
  // GPipe, M 4: each stage holds its 2 layers' activations for 4 micro-batches; the last
  // stage the logits of all 4.
  EXPECT_NEAR(static_cast<double>(a.activations_bytes),
              static_cast<double>(whole.layer_activations_bytes) / 2 * 4, 2);
  EXPECT_EQ(a.logits_bytes, 0U);
  EXPECT_EQ(b.logits_bytes, 4 * whole.logits_bytes);
  // Every stage judged by the plan's rule against its node's budget.
  EXPECT_EQ(a.verdict, Judge(a.peak_bytes, 1'000'000'000'000ULL));
  EXPECT_EQ(p.heaviest, b.peak_bytes > a.peak_bytes ? 1 : 0);
  // Full fine-tune: gradients of each stage's parameters, whole = both stages.
  EXPECT_NEAR(static_cast<double>(a.gradients_bytes + b.gradients_bytes),
              static_cast<double>(whole.gradients_bytes), 4);
}

TEST(PipelineStages, TiedEmbeddingsCopiedToTheLastStage) {
  const ModelSpec s = SmallModel(true);
  const Workload w = FullMicro();
  const Footprint whole = ComputeFootprint(s, w);
  const PipelinePlan p =
      PlanPipeline(s, w, {}, Config(Schedule::k1f1b, 2, 2), 1'000'000'000'000ULL);
  EXPECT_NEAR(static_cast<double>(p.stages[0].weights_bytes + p.stages[1].weights_bytes),
              static_cast<double>(whole.weights_bytes + kRootBytes), 2);
}

TEST(PipelineStages, OneFOneBHoldsFewerThanGpipe) {
  const ModelSpec s = SmallModel();
  const Workload w = FullMicro();
  const Footprint whole = ComputeFootprint(s, w);
  const PipelinePlan p =
      PlanPipeline(s, w, {}, Config(Schedule::k1f1b, 2, 8), 1'000'000'000'000ULL);
  EXPECT_NEAR(static_cast<double>(p.stages[0].activations_bytes),
              static_cast<double>(whole.layer_activations_bytes) / 2 * 2, 2);
  EXPECT_NEAR(static_cast<double>(p.stages[1].activations_bytes),
              static_cast<double>(whole.layer_activations_bytes) / 2, 2);
  EXPECT_EQ(p.stages[1].logits_bytes, whole.logits_bytes);
}

TEST(PipelineStages, AdvisesTheScheduleThatFits) {
  const ModelSpec s = SmallModel();
  Workload w = FullMicro();
  w.seq = 4096;
  const PipelineConfig gpipe = Config(Schedule::kGpipe, 2, 8);
  const PipelineConfig onef = Config(Schedule::k1f1b, 2, 8);
  const uint64_t big = 1'000'000'000'000ULL;
  const PipelinePlan g = PlanPipeline(s, w, {}, gpipe, big);
  const PipelinePlan o = PlanPipeline(s, w, {}, onef, big);
  const uint64_t g_peak = g.stages[static_cast<size_t>(g.heaviest)].peak_bytes;
  const uint64_t o_peak = o.stages[static_cast<size_t>(o.heaviest)].peak_bytes;
  ASSERT_LT(o_peak, g_peak);
  // A budget 1f1b fits in and gpipe does not.
  const uint64_t budget = g_peak - 1;
  const PipelinePlan tight = PlanPipeline(s, w, {}, gpipe, budget);
  EXPECT_EQ(tight.verdict, Verdict::kDoesNotFit);
  ASSERT_EQ(tight.advice.size(), 1U);
  EXPECT_NE(EnglishText(tight.advice[0]).find("with 1f1b stage"), std::string::npos)
      << EnglishText(tight.advice[0]);
  // A budget under one micro-batch in flight: the model's share itself does not fit.
  const PipelinePlan none = PlanPipeline(s, w, {}, gpipe, 1'000'000);
  ASSERT_EQ(none.advice.size(), 1U);
  EXPECT_NE(EnglishText(none.advice[0]).find("even with one micro-batch"), std::string::npos);
}

// Each stage is judged by the plan's own judge against the node's MemAvailable and levels
// (docs/config.md "The levels"): with MemAvailable set so that the heaviest stage leaves less
// than the reserve and the warning level but more than the reserve and the kill level, the
// stage, and the plan, are tight, as plan itself would say for that peak.
TEST(PipelineStages, EachStageIsJudgedAgainstTheNodesLevels) {
  const ModelSpec s = SmallModel();
  const Workload w = FullMicro();
  const PipelineConfig onef = Config(Schedule::k1f1b, 2, 2);
  const PipelinePlan probe = PlanPipeline(s, w, {}, onef, 1'000'000'000'000ULL);
  const uint64_t peak = probe.stages[static_cast<size_t>(probe.heaviest)].peak_bytes;
  Budget node;
  node.levels = ResolvePoolLevels(128ULL << 30);  // kill 10.24 GiB, warn twice it
  const uint64_t between = (node.levels.fit_bytes() + node.levels.floor_bytes()) / 2;
  node.judged_available_bytes = peak + between;
  node.budget_bytes = node.judged_available_bytes - node.levels.floor_bytes();
  const PipelinePlan p = PlanPipeline(s, w, {}, onef, node);
  EXPECT_EQ(p.verdict, Verdict::kTight);
  for (const StageFootprint& st : p.stages) EXPECT_EQ(st.verdict, Judge(st.peak_bytes, node));
  // Against a size alone the same peak is judged by --budget's rule instead (10 % kept).
  EXPECT_EQ(PlanPipeline(s, w, {}, onef, node.budget_bytes).verdict,
            Judge(peak, node.budget_bytes));
}

}  // namespace
}  // namespace headroom
