// One footprint: every framework profile x method x 1 and 2 devices x each sharding. The
// peaks of a node come from the one arithmetic the single-device plan uses (plan/footprint.h
// NodeFootprint), so a node's figures must agree with the single-device plan's where the
// sharding changes nothing: one device, the allocator slack's share, the overhead's parts,
// "the same run on one device".
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "model/catalog.h"
#include "plan/footprint.h"
#include "plan/framework_profile.h"
#include "plan/sharding.h"

namespace headroom {
namespace {

constexpr Sharding kEverySharding[] = {Sharding::kDdp, Sharding::kFsdp, Sharding::kZero2,
                                       Sharding::kZero3};

Workload ProfileRun(Framework framework, Method method) {
  Workload w = ProfileWorkload(framework);
  w.method = method;
  if (method == Method::kQlora) w.weight_dtype = DType::kNf4;
  return w;
}

// The slack's share of the tensor peak the profile's allocator leaves (docs/plan-formulas.md,
// "Peaks"): 10 % with the default caching allocator, 1/(2d) with expandable segments and
// blocks rounded to 1/d of their power-of-two interval.
double ExpectedSlack(const Workload& w) {
  if (w.expandable_segments && w.roundup_power2_divisions > 0)
    return 1.0 / (2.0 * w.roundup_power2_divisions);
  return 0.10;
}

// "CUDA context 0.78 GiB + allocator slack 1.6 % of tensors ...": the percentage's words.
std::string SlackWords(const Footprint& f) {
  for (const auto& t : f.terms) {
    if (t.key != "overhead") continue;
    const std::string text = EnglishText(t.formula);
    const auto from = text.find("allocator slack ");
    const auto to = text.find(" of tensors");
    if (from == std::string::npos || to == std::string::npos) return text;
    return text.substr(from, to - from);
  }
  return "no overhead line";
}

void ExpectSameFootprint(const Footprint& a, const Footprint& b, const std::string& what) {
  EXPECT_EQ(a.weights_bytes, b.weights_bytes) << what;
  EXPECT_EQ(a.gradients_bytes, b.gradients_bytes) << what;
  EXPECT_EQ(a.optimizer_bytes, b.optimizer_bytes) << what;
  EXPECT_EQ(a.optimizer_step_bytes, b.optimizer_step_bytes) << what;
  EXPECT_EQ(a.activations_bytes, b.activations_bytes) << what;
  EXPECT_EQ(a.overhead_bytes, b.overhead_bytes) << what;
  EXPECT_EQ(a.allocator_slack_bytes, b.allocator_slack_bytes) << what;
  EXPECT_EQ(a.backward_peak_bytes, b.backward_peak_bytes) << what;
  EXPECT_EQ(a.step_peak_bytes, b.step_peak_bytes) << what;
  EXPECT_EQ(a.tensor_peak_bytes, b.tensor_peak_bytes) << what;
  EXPECT_EQ(a.steady_peak_bytes, b.steady_peak_bytes) << what;
  EXPECT_EQ(a.load_peak_bytes, b.load_peak_bytes) << what;
  ASSERT_EQ(a.terms.size(), b.terms.size()) << what;
  for (size_t i = 0; i < a.terms.size(); ++i) {
    EXPECT_EQ(a.terms[i].key, b.terms[i].key) << what;
    EXPECT_EQ(a.terms[i].bytes, b.terms[i].bytes) << what << " " << a.terms[i].key;
    EXPECT_EQ(EnglishText(a.terms[i].formula), EnglishText(b.terms[i].formula)) << what;
  }
}

TEST(FootprintShares, EveryProfileAndShardingAgreesWithTheSingleDevicePlan) {
  const ModelSpec* spec = FindModel("llama-3.1-8b");
  ASSERT_NE(spec, nullptr);
  int crossed = 0;
  for (const FrameworkProfile& profile : FrameworkProfiles()) {
    for (Method method : {Method::kLora, Method::kQlora, Method::kFull}) {
      const Workload w = ProfileRun(profile.framework, method);
      const Footprint single = ComputeFootprint(*spec, w);
      const double slack = ExpectedSlack(w);
      EXPECT_NEAR(static_cast<double>(single.allocator_slack_bytes),
                  slack * static_cast<double>(single.tensor_peak_bytes), 1.0)
          << profile.name;
      for (Sharding sharding : kEverySharding) {
        const std::string what = std::string(profile.name) + " " + std::string(Name(method)) + " " +
                                 std::string(Name(sharding));
        FootprintOptions o;
        // One device: every sharding is the single-device plan, figure for figure.
        o.parallel = {1, sharding, true};
        const Footprint one = ComputeFootprint(*spec, w, o);
        EXPECT_FALSE(one.sharding.has_value()) << what;
        ExpectSameFootprint(one, single, what + " devices 1");

        // Two devices: one node's share, by the same arithmetic.
        o.parallel = {2, sharding, true};
        const Footprint node = ComputeFootprint(*spec, w, o);
        ASSERT_TRUE(node.sharding.has_value()) << what;
        EXPECT_EQ(node.sharding->single_device_peak_bytes, single.peak_bytes()) << what;
        // The allocator slack is the profile's share of the node's tensor peak, and says so.
        EXPECT_NEAR(static_cast<double>(node.allocator_slack_bytes),
                    slack * static_cast<double>(node.tensor_peak_bytes), 1.0)
            << what;
        EXPECT_EQ(SlackWords(node), SlackWords(single)) << what;
        EXPECT_EQ(node.cuda_context_bytes, single.cuda_context_bytes) << what;
        EXPECT_EQ(node.host_process_bytes, single.host_process_bytes) << what;
        EXPECT_EQ(node.overhead_bytes,
                  node.cuda_context_bytes + node.allocator_slack_bytes + node.host_process_bytes)
            << what;
        EXPECT_EQ(node.steady_peak_bytes,
                  node.tensor_peak_bytes + node.overhead_bytes + node.rollout_bytes)
            << what;
        // Each node runs its own micro-batch: activations and the dequantized weight are one
        // device's.
        EXPECT_EQ(node.activations_bytes, single.activations_bytes) << what;
        EXPECT_EQ(node.dequant_bytes, single.dequant_bytes) << what;
        EXPECT_GE(node.backward_peak_bytes, node.weights_bytes + node.optimizer_bytes +
                                                node.activations_bytes + node.dequant_bytes)
            << what;

        // The same run on one device with the workload the sharding runs (ZeRO's fp32 master
        // copy): the terms a node shares.
        FootprintOptions whole_options;
        const Footprint whole =
            ComputeFootprint(*spec, ShardedWorkload(w, o.parallel), whole_options);
        const bool splits_params = sharding == Sharding::kFsdp || sharding == Sharding::kZero3;
        const bool splits_states = sharding != Sharding::kDdp;
        EXPECT_EQ(node.weights_bytes, ShareOf(whole.weights_bytes, splits_params ? 2 : 1)) << what;
        EXPECT_EQ(node.optimizer_bytes, ShareOf(whole.optimizer_bytes, splits_states ? 2 : 1))
            << what;
        EXPECT_EQ(node.gradients_bytes, ShareOf(whole.gradients_bytes, splits_states ? 2 : 1))
            << what;
        if (sharding == Sharding::kDdp) {
          // DDP: both candidates carry the gradient-sized buckets on top of one device's.
          EXPECT_EQ(node.tensor_peak_bytes, single.tensor_peak_bytes + single.gradients_bytes)
              << what;
          EXPECT_GT(node.steady_peak_bytes, single.steady_peak_bytes) << what;
        } else {
          // Splitting the states (and for fsdp and zero3 the parameters) over two nodes never
          // needs more per node than one device holding the same run.
          EXPECT_LE(node.tensor_peak_bytes, whole.tensor_peak_bytes) << what;
          EXPECT_LE(node.steady_peak_bytes, whole.steady_peak_bytes) << what;
          EXPECT_LE(node.peak_bytes(), whole.peak_bytes()) << what;
        }
        ++crossed;
      }
    }
  }
  EXPECT_GE(FrameworkProfiles().size(), 9u);
  EXPECT_EQ(crossed, static_cast<int>(FrameworkProfiles().size()) * 3 * 4);
}

// A discrete GPU: on every node, as on one device, the device's peaks leave the host process
// out (host memory, in host_peak_bytes with the offloaded checkpoints); unified memory keeps
// it in the pool and the peaks.
TEST(FootprintShares, OnADiscreteGpuEveryNodeLeavesTheHostProcessOut) {
  const ModelSpec* spec = FindModel("llama-3.1-8b");
  ASSERT_NE(spec, nullptr);
  for (Framework framework : {Framework::kHf, Framework::kUnsloth}) {
    const Workload w = ProfileRun(framework, Method::kLora);
    for (Sharding sharding : kEverySharding) {
      for (int64_t devices : {1, 2}) {
        const std::string what = std::string(Name(framework)) + " " + std::string(Name(sharding)) +
                                 " x" + std::to_string(devices);
        FootprintOptions unified_options;
        unified_options.parallel = {devices, sharding, true};
        FootprintOptions discrete_options = unified_options;
        discrete_options.unified_memory = false;
        const Footprint unified = ComputeFootprint(*spec, w, unified_options);
        const Footprint discrete = ComputeFootprint(*spec, w, discrete_options);
        EXPECT_GT(discrete.host_process_bytes, 0u) << what;
        EXPECT_EQ(discrete.steady_peak_bytes,
                  discrete.tensor_peak_bytes + discrete.cuda_context_bytes +
                      discrete.allocator_slack_bytes + discrete.rollout_bytes)
            << what;
        EXPECT_EQ(discrete.host_peak_bytes,
                  discrete.host_process_bytes + discrete.host_offload_bytes)
            << what;
        EXPECT_EQ(unified.host_peak_bytes, 0u) << what;
        EXPECT_EQ(unified.steady_peak_bytes, unified.tensor_peak_bytes +
                                                 unified.cuda_context_bytes +
                                                 unified.allocator_slack_bytes +
                                                 unified.host_process_bytes + unified.rollout_bytes)
            << what;
        EXPECT_EQ(unified.load_peak_bytes - discrete.load_peak_bytes, unified.host_process_bytes)
            << what;
      }
    }
  }
}

}  // namespace
}  // namespace headroom
