// Sharding math on literal term sizes: a footprint written out by hand, rewritten into one
// node's share, each expectation computed here from the formula in docs/plan-formulas.md
// ("Sharding over N devices"), not copied from the code's output.
#include "plan/sharding.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "plan/footprint.h"
#include "plan/plan_request.h"

namespace headroom {
namespace {

// A small Llama-shaped model: 4 layers, hidden 1024, 8 heads of 128 (no GQA), MLP 4096,
// vocabulary 1000, untied lm_head.
ModelSpec Small() {
  ModelSpec s;
  s.name = "small";
  s.family = "llama";
  s.hidden_size = 1024;
  s.num_layers = 4;
  s.num_heads = 8;
  s.num_kv_heads = 8;
  s.intermediate_size = 4096;
  s.vocab_size = 1000;
  EXPECT_EQ(EnglishText(CompleteAndValidate(&s)), "");
  return s;
}

// One decoder layer's linears: q, k, v, o 1024 x 1024, gate, up, down 1024 x 4096.
constexpr uint64_t kLayerParams = 4ULL * 1024 * 1024 + 3ULL * 1024 * 4096;
// Embeddings and lm_head: 1000 x 1024 each.
constexpr uint64_t kRootParams = 2ULL * 1000 * 1024;

Workload FullBf16() {
  Workload w;
  w.method = Method::kFull;
  w.weight_dtype = DType::kBf16;
  return w;
}

// Literal terms (bytes): weights 10 GB, gradients 10 GB (5B trainable x 2 B), optimizer
// 20 GB, step 10 GB, activations 3 GB, and a 1 GB first gradient at the start of backward.
constexpr uint64_t kW = 10'000'000'000, kG = 10'000'000'000, kO = 20'000'000'000,
                   kS = 10'000'000'000, kA = 3'000'000'000, kFirst = 1'000'000'000;
constexpr uint64_t kContext = 800ULL << 20, kHost = 3ULL << 29;

Footprint Literal() {
  Footprint f;
  f.total_params = 5'000'000'000;
  f.trainable_params = 5'000'000'000;
  f.weights_bytes = kW;
  f.gradients_bytes = kG;
  f.optimizer_bytes = kO;
  f.optimizer_step_bytes = kS;
  f.activations_bytes = kA;
  f.first_grad_bytes = kFirst;  // the full fine-tune's first gradient, in the backward peak
  f.backward_peak_bytes = kW + kO + kA + kFirst;
  f.step_peak_bytes = kW + kG + kO + kS;
  f.tensor_peak_bytes = std::max(f.backward_peak_bytes, f.step_peak_bytes);
  f.cuda_context_bytes = kContext;
  f.host_process_bytes = kHost;
  f.allocator_slack_bytes = f.tensor_peak_bytes / 10;
  f.overhead_bytes = kContext + f.allocator_slack_bytes + kHost;
  f.steady_peak_bytes = f.tensor_peak_bytes + f.overhead_bytes;
  f.load_transient_bytes = 5'000'000'000;
  f.load_peak_bytes = kW + f.load_transient_bytes + kContext + kHost;
  for (const char* key : {"weights", "gradients", "optimizer", "optimizer_step",
                          "layer_activations", "logits", "overhead", "load_transient"}) {
    f.terms.push_back({key, Message::Literal(key), 0, Message::Literal("x")});
  }
  return f;
}

Footprint Sharded(Sharding sharding, int64_t devices = 2, const Workload& w = FullBf16()) {
  Footprint f = Literal();
  FootprintOptions o;
  o.parallel = {devices, sharding, true};
  NodeFootprint(Small(), w, o, &f);
  return f;
}

const FootprintTerm* Term(const Footprint& f, const std::string& key) {
  for (const auto& t : f.terms) {
    if (t.key == key) return &t;
  }
  return nullptr;
}

uint64_t Slack(uint64_t tensor_peak) {
  return static_cast<uint64_t>(std::llround(static_cast<double>(tensor_peak) * 0.10));
}

TEST(Sharding, Zero3OfTwoHalvesParamsGradsAndStatesAndAddsTheGatherBuffer) {
  const Footprint f = Sharded(Sharding::kZero3);
  EXPECT_EQ(f.weights_bytes, kW / 2);
  EXPECT_EQ(f.gradients_bytes, kG / 2);
  EXPECT_EQ(f.optimizer_bytes, kO / 2);
  EXPECT_EQ(f.optimizer_step_bytes, kS / 2);
  EXPECT_EQ(f.activations_bytes, kA);  // each node runs its own micro-batch
  // Gathered: the largest parameter (a 1024 x 4096 MLP weight, bf16) + the prefetch bucket
  // 0.9 x 1024^2 elements in bf16.
  const uint64_t gather = std::llround(1024.0 * 4096 * 2 + 0.9 * 1024 * 1024 * 2);
  const uint64_t bucket = 1024ULL * 1024 * 2;  // reduce_bucket_size hidden^2, bf16
  ASSERT_NE(Term(f, "zero3_gather"), nullptr);
  EXPECT_EQ(Term(f, "zero3_gather")->bytes, gather);
  EXPECT_EQ(Term(f, "zero_reduce_bucket")->bytes, bucket);
  EXPECT_EQ(f.backward_peak_bytes, kW / 2 + kO / 2 + kA + gather + bucket + kFirst);
  // The step: the partition's gradient in fp32, 5B x 4 B / 2.
  const uint64_t fp32_grads = 5'000'000'000ULL * 4 / 2;
  EXPECT_EQ(Term(f, "zero_fp32_grads")->bytes, fp32_grads);
  EXPECT_EQ(f.step_peak_bytes, kW / 2 + kG / 2 + kO / 2 + kS / 2 + fp32_grads);
  EXPECT_EQ(f.tensor_peak_bytes, std::max(f.backward_peak_bytes, f.step_peak_bytes));
  EXPECT_EQ(f.weights_bytes, Term(f, "weights")->bytes);
  ASSERT_TRUE(f.sharding.has_value());
  EXPECT_EQ(f.sharding->devices, 2);
  EXPECT_EQ(f.sharding->single_device_peak_bytes, Literal().peak_bytes());
}

TEST(Sharding, DdpKeepsEverythingWholeAndAddsGradientSizedBuckets) {
  const Footprint f = Sharded(Sharding::kDdp);
  EXPECT_EQ(f.weights_bytes, kW);
  EXPECT_EQ(f.gradients_bytes, kG);
  EXPECT_EQ(f.optimizer_bytes, kO);
  EXPECT_EQ(f.optimizer_step_bytes, kS);
  ASSERT_NE(Term(f, "ddp_buckets"), nullptr);
  EXPECT_EQ(Term(f, "ddp_buckets")->bytes, kG);
  EXPECT_EQ(f.backward_peak_bytes, kW + kO + kA + kG + kFirst);
  EXPECT_EQ(f.step_peak_bytes, kW + kG + kO + kS + kG);
  // So DDP over two nodes needs more per node than one device does.
  EXPECT_GT(f.peak_bytes(), Literal().peak_bytes());
  // The overhead's slack follows the new tensor peak.
  EXPECT_EQ(f.allocator_slack_bytes, Slack(f.tensor_peak_bytes));
  EXPECT_EQ(f.overhead_bytes, kContext + f.allocator_slack_bytes + kHost);
  EXPECT_EQ(f.steady_peak_bytes, f.tensor_peak_bytes + f.overhead_bytes);
}

TEST(Sharding, Zero2LeavesParamsWholeAndSplitsGradsAndStates) {
  const Footprint f = Sharded(Sharding::kZero2);
  EXPECT_EQ(f.weights_bytes, kW);
  EXPECT_EQ(f.gradients_bytes, kG / 2);
  EXPECT_EQ(f.optimizer_bytes, kO / 2);
  EXPECT_EQ(Term(f, "zero3_gather"), nullptr);
  const uint64_t bucket = 1024ULL * 1024 * 2;
  EXPECT_EQ(f.backward_peak_bytes, kW + kO / 2 + kA + bucket + kFirst);
  EXPECT_EQ(f.load_peak_bytes, kW + 5'000'000'000ULL + kContext + kHost);
}

TEST(Sharding, FsdpAddsTheRootUnitAndTwoLayersAndTheirGradients) {
  const Footprint f = Sharded(Sharding::kFsdp);
  EXPECT_EQ(f.weights_bytes, kW / 2);
  EXPECT_EQ(f.gradients_bytes, kG / 2);
  EXPECT_EQ(f.optimizer_bytes, kO / 2);
  const uint64_t gather = kRootParams * 2 + 2 * kLayerParams * 2;
  const uint64_t grads = (kRootParams + kLayerParams) * 2;
  EXPECT_EQ(Term(f, "fsdp_gather")->bytes, gather);
  EXPECT_EQ(Term(f, "fsdp_unsharded_grads")->bytes, grads);
  // The first gradient (lm_head's) is inside the root unit's gradient, not counted twice.
  EXPECT_EQ(f.backward_peak_bytes, kW / 2 + kO / 2 + kA + gather + grads);
  EXPECT_EQ(f.step_peak_bytes, kW / 2 + kG / 2 + kO / 2 + kS / 2);
  EXPECT_EQ(f.load_peak_bytes, kW / 2 + 5'000'000'000ULL + kContext + kHost);
  EXPECT_EQ(f.sharding->layer_unit_params, kLayerParams);
  EXPECT_EQ(f.sharding->root_unit_params, kRootParams);
}

TEST(Sharding, FsdpLoraShardsTheFrozenBaseAndGathersNoRootGradient) {
  Workload w;  // LoRA r16, bf16 base
  Footprint f = Literal();
  f.trainable_params = 4'000'000;  // adapters, 1M per layer
  FootprintOptions o;
  o.parallel = {2, Sharding::kFsdp, true};
  NodeFootprint(Small(), w, o, &f);
  EXPECT_EQ(f.weights_bytes, kW / 2);
  // The adapters are fp32 and sit in the decoder layers: one layer's 1M adapters' gradients.
  EXPECT_EQ(Term(f, "fsdp_unsharded_grads")->bytes, 1'000'000ULL * 4);
  EXPECT_EQ(Term(f, "fsdp_gather")->bytes,
            kRootParams * 2 + 2 * (kLayerParams * 2 + 1'000'000 * 4));
}

TEST(Sharding, MoreDevicesSmallerShares) {
  const Footprint two = Sharded(Sharding::kFsdp, 2);
  const Footprint four = Sharded(Sharding::kFsdp, 4);
  EXPECT_EQ(four.weights_bytes, kW / 4);
  EXPECT_LT(four.peak_bytes(), two.peak_bytes());
}

TEST(Sharding, ZeroPlansDeepSpeedsFp32MasterPartition) {
  const ModelSpec s = Small();
  const Workload w = FullBf16();
  FootprintOptions o;
  const Footprint one = ComputeFootprint(s, w, o);
  o.parallel = {2, Sharding::kZero2, true};
  const Footprint zero2 = ComputeFootprint(s, w, o);
  // AdamW, fp32 states (2 x 4 B) + fp32 master (4 B) per trainable parameter, split 2 ways;
  // one device without master weights holds 2 x 2 B.
  EXPECT_EQ(one.optimizer_bytes, one.trainable_params * 2 * 2);
  EXPECT_EQ(zero2.optimizer_bytes, (one.trainable_params * 12 + 1) / 2);
  // The one-device peak it is compared with is the run as given, without the master copy.
  EXPECT_EQ(zero2.sharding->single_device_peak_bytes, one.peak_bytes());
  o.parallel = {2, Sharding::kFsdp, true};
  EXPECT_EQ(ComputeFootprint(s, w, o).optimizer_bytes, (one.optimizer_bytes + 1) / 2);
}

TEST(Sharding, OneDeviceIsTheSingleDevicePlanAndSaysSo) {
  const ModelSpec s = Small();
  FootprintOptions o;
  const Footprint plain = ComputeFootprint(s, FullBf16(), o);
  o.parallel = {1, Sharding::kFsdp, true};
  const Footprint one = ComputeFootprint(s, FullBf16(), o);
  EXPECT_EQ(one.peak_bytes(), plain.peak_bytes());
  EXPECT_FALSE(one.sharding.has_value());
  bool said = false;
  for (const auto& n : one.notes)
    said |= EnglishText(n).find("changes nothing") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(Sharding, Llama70BFullFineTuneOverTwoSparks) {
  ModelSpec s = Small();
  s.hidden_size = 8192;
  s.num_layers = 80;
  s.num_heads = 64;
  s.num_kv_heads = 8;
  s.head_dim = 0;
  s.intermediate_size = 28672;
  s.vocab_size = 128256;
  ASSERT_EQ(EnglishText(CompleteAndValidate(&s)), "");
  FootprintOptions o;
  const Footprint one = ComputeFootprint(s, FullBf16(), o);
  o.parallel = {2, Sharding::kFsdp, true};
  const Footprint fsdp = ComputeFootprint(s, FullBf16(), o);
  // Half the model state, plus one device's activations and the units in flight.
  EXPECT_EQ(fsdp.weights_bytes, (one.weights_bytes + 1) / 2);
  EXPECT_LT(fsdp.peak_bytes(), one.peak_bytes());
  // The step holds no unit in flight: exactly the halves (each rounded up).
  auto half = [](uint64_t x) { return (x + 1) / 2; };
  EXPECT_EQ(fsdp.step_peak_bytes, half(one.weights_bytes) + half(one.gradients_bytes) +
                                      half(one.optimizer_bytes) + half(one.optimizer_step_bytes));
  // Backward: the root unit (2 x 128256 x 8192) and two decoder layers (q, o 8192^2; k, v
  // 8192 x 1024; gate, up, down 8192 x 28672) whole in bf16, and the root's and one layer's
  // gradients before the reduce-scatter.
  const uint64_t root = 2ULL * 128256 * 8192;
  const uint64_t layer = 2ULL * 8192 * 8192 + 2ULL * 8192 * 1024 + 3ULL * 8192 * 28672;
  EXPECT_EQ(fsdp.backward_peak_bytes, half(one.weights_bytes) + half(one.optimizer_bytes) +
                                          one.activations_bytes + root * 2 + 2 * layer * 2 +
                                          (root + layer) * 2);
}

TEST(Sharding, ParseNamesAndErrors) {
  EXPECT_EQ(ParseSharding("FSDP").value(), Sharding::kFsdp);
  EXPECT_EQ(ParseSharding("zero-3").value(), Sharding::kZero3);
  EXPECT_EQ(Name(Sharding::kZero2), "zero2");
  const auto bad = ParseSharding("tp");
  ASSERT_FALSE(bad);
  EXPECT_EQ(EnglishText(bad.error().what), "unknown sharding 'tp' (expected ddp|fsdp|zero2|zero3)");
}

TEST(Sharding, RequestFlagsAreChecked) {
  auto refused = [](const std::string& devices, const std::string& sharding) {
    PlanFlagText t;
    t.model = "llama-3.1-8b";
    t.devices = devices;
    t.sharding = sharding;
    Message error;
    EXPECT_FALSE(ParsePlanRequest(t, &error).has_value()) << devices << " " << sharding;
    return EnglishText(error);
  };
  EXPECT_EQ(refused("0", ""), "--devices: '0' must be at least 1");
  EXPECT_EQ(refused("-1", ""), "--devices: '-1' must be at least 1");
  EXPECT_EQ(refused("5000", ""), "--devices: 5000 is absurdly large (at most 1024)");
  EXPECT_EQ(refused("two", ""), "--devices: 'two' is not a whole number");
  EXPECT_EQ(refused("2", "tensor"),
            "--sharding: unknown sharding 'tensor' (expected ddp|fsdp|zero2|zero3)");
  PlanFlagText t;
  t.model = "llama-3.1-8b";
  t.devices = "2";
  t.sharding = "zero3";
  Message error;
  const auto r = ParsePlanRequest(t, &error);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->parallel, (Parallelism{2, Sharding::kZero3, true}));
  // The JSON form keeps them and reads them back.
  const nlohmann::json j = PlanRequestToJson(*r);
  EXPECT_EQ(j["devices"], 2);
  EXPECT_EQ(j["sharding"], "zero3");
  const auto back = PlanRequestFromJson(j, &error);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->parallel, r->parallel);
}

}  // namespace
}  // namespace headroom
