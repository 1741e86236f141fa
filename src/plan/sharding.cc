// Implementation notes. Every share and buffer is derived from the whole run's terms
// (weights W, gradients G, optimizer states O, step transient S) and the model's shapes; no
// constant is fitted, and no peak is computed here (plan/footprint.cc does, from the shares). The
// mechanisms, with the files they come from (docs/plan-formulas.md, "Sharding over N devices", has
// the formulas):
//  - DDP (pytorch/pytorch torch/nn/parallel/distributed.py, bucket_cap_mb 25 by default, the
//    first bucket 1 MiB; torch/csrc/distributed/c10d/reducer.cpp initialize_buckets): the
//    reducer allocates one flat tensor per bucket and every trainable parameter has a slot in
//    one, so the buckets together hold a gradient-sized copy for the run's whole life
//    (gradient_as_bucket_view=False is the default; Transformers and Accelerate keep it).
//  - FSDP full shard (torch/distributed/fsdp/_flat_param.py, _runtime_utils.py for FSDP1;
//    torch/distributed/fsdp/_fully_shard/_fully_shard.py for FSDP2): each rank keeps 1/N of
//    every flat parameter, its gradient and optimizer states. A unit is all-gathered before it
//    computes and freed after (reshard_after_forward is True for non-root units); the root
//    unit, which keeps what no wrap policy wraps (embeddings, lm_head, the final norm), is not
//    resharded after forward (FSDP2: reshard_after_forward None means False for the root), so
//    it stays whole through backward; limit_all_gathers / FSDP2's prefetch hold at most two
//    decoder layers unsharded at once. In backward a unit's gradient is whole until its
//    reduce-scatter: the root's until the end of backward, one decoder layer's at a time.
//    The wrap unit is the decoder layer (transformer_auto_wrap_policy with the model's
//    _no_split_modules, as Accelerate and torchtune do); its small tensors (norms, biases,
//    routers) are left out of the unit's size.
//  - DeepSpeed ZeRO (deepspeedai/DeepSpeed deepspeed/runtime/zero/stage_1_and_2.py,
//    stage3.py, config.py): stage 2 partitions gradients and optimizer states; stage 3 the
//    parameters too, gathered module by module with stage3_prefetch_bucket_size elements
//    fetched ahead. Both copy gradients into a contiguous reduce bucket of
//    reduce_bucket_size elements (contiguous_gradients) and keep the partition's fp32 master
//    weights, fp32 states (ShardedWorkload) and, for the step, the partition's gradient in
//    fp32. Bucket sizes are Transformers' "auto" values (transformers/integrations/
//    deepspeed.py: reduce_bucket_size hidden^2, stage3_prefetch_bucket_size 0.9 x hidden^2),
//    which TRL, axolotl and LLaMA-Factory's shipped ZeRO configs use.
#include "plan/sharding.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

#include "base/bytes.h"
#include "base/message.h"
#include "base/text.h"
#include "plan/activations.h"
#include "plan/footprint.h"

namespace headroom {
namespace {

constexpr std::array<std::pair<std::string_view, Sharding>, 7> kShardings{{
    {"ddp", Sharding::kDdp},
    {"fsdp", Sharding::kFsdp},
    {"zero2", Sharding::kZero2},
    {"zero3", Sharding::kZero3},
    {"full_shard", Sharding::kFsdp},
    {"zero-2", Sharding::kZero2},
    {"zero-3", Sharding::kZero3},
}};

bool ShardsParams(Sharding s) { return s == Sharding::kFsdp || s == Sharding::kZero3; }
bool ShardsStates(Sharding s) { return s != Sharding::kDdp; }
bool IsZero(Sharding s) { return s == Sharding::kZero2 || s == Sharding::kZero3; }

bool Quantized(DType d) {
  return d == DType::kNf4 || d == DType::kInt4 || d == DType::kNvfp4 || d == DType::kFp8 ||
         d == DType::kInt8;
}

// The model's units, as FSDP wraps it and DeepSpeed gathers it.
struct Units {
  uint64_t layer_params = 0;     // the largest decoder layer's linears
  uint64_t root_params = 0;      // embeddings and lm_head
  uint64_t largest_linear = 0;   // the largest single linear parameter
  double linear_bytes = 0;       // bytes per parameter of a linear, as stored
  double root_bytes = 0;         // bytes per parameter of the embeddings and lm_head
  double param_bytes = 0;        // bytes per trainable parameter (and its gradient)
  uint64_t layer_trainable = 0;  // trainable parameters in one decoder layer
  uint64_t root_trainable = 0;   // trainable parameters in the root unit
};

Units ModelUnits(const ModelSpec& s, const Workload& w, const Footprint& whole) {
  Units u;
  for (bool dense : {true, false}) {
    uint64_t layer = 0;
    for (const auto& l : LayerLinears(s, dense)) {
      const uint64_t one =
          static_cast<uint64_t>(l.in_features) * static_cast<uint64_t>(l.out_features);
      layer += one * static_cast<uint64_t>(l.count);
      const uint64_t tensor =
          l.is_expert && ExpertsAreFused(s) ? one * static_cast<uint64_t>(l.count) : one;
      u.largest_linear = std::max(u.largest_linear, tensor);
    }
    u.layer_params = std::max(u.layer_params, layer);
  }
  u.root_params = EmbeddingParams(s) + LmHeadParams(s);
  u.linear_bytes = StoredLinearBytesPerParam(w);
  const double c = DTypeBytes(w.compute_dtype);
  u.root_bytes = Quantized(w.weight_dtype) ? c : DTypeBytes(w.weight_dtype);
  u.param_bytes = w.method == Method::kFull ? DTypeBytes(w.weight_dtype) : DTypeBytes(DType::kFp32);
  if (w.method == Method::kFull) {
    u.layer_trainable = u.layer_params;
    u.root_trainable = u.root_params;
  } else {
    // LoRA adapters live in the decoder layers only, alike in every layer.
    u.layer_trainable =
        whole.trainable_params / static_cast<uint64_t>(std::max<int64_t>(1, s.num_layers));
  }
  return u;
}

// One node's own buffers under `p`, each with when it is alive.
std::vector<NodeBuffer> NodeBuffers(const ModelSpec& s, const Workload& w, const Parallelism& p,
                                    const Footprint& whole, const Units& u) {
  std::vector<NodeBuffer> out;
  const double h2 = static_cast<double>(s.hidden_size) * static_cast<double>(s.hidden_size);
  const double c = DTypeBytes(w.compute_dtype);
  switch (p.sharding) {
    case Sharding::kDdp:
      out.push_back({"ddp_buckets", Msg("DDP gradient buckets"), whole.gradients_bytes,
                     Msg("a slot for every gradient: {} trainable x {:g} B, in buckets of "
                         "25 MiB (bucket_cap_mb)",
                         FormatParamCount(whole.trainable_params), u.param_bytes),
                     true, true});
      break;
    case Sharding::kFsdp: {
      const uint64_t gather =
          SaturatingBytes(static_cast<double>(u.root_params) * u.root_bytes +
                          2 * static_cast<double>(u.layer_params) * u.linear_bytes +
                          2 * static_cast<double>(u.layer_trainable) *
                              (w.method == Method::kFull ? 0 : u.param_bytes));
      const uint64_t grads = SaturatingBytes(
          static_cast<double>(u.root_trainable + u.layer_trainable) * u.param_bytes);
      out.push_back({"fsdp_gather", Msg("FSDP unsharded units"), gather,
                     Msg("root unit (embeddings, lm_head) {} x {:g} B + 2 decoder layers "
                         "{} x {:.4g} B each",
                         FormatParamCount(u.root_params), u.root_bytes,
                         FormatParamCount(u.layer_params), u.linear_bytes),
                     true, false});
      out.push_back({"fsdp_unsharded_grads", Msg("FSDP gradients before reduce-scatter"), grads,
                     Msg("root unit {} + one decoder layer {} trainable x {:g} B",
                         FormatParamCount(u.root_trainable), FormatParamCount(u.layer_trainable),
                         u.param_bytes),
                     true, false});
      break;
    }
    case Sharding::kZero2:
    case Sharding::kZero3: {
      if (p.sharding == Sharding::kZero3) {
        const double largest = std::max(static_cast<double>(u.largest_linear) * u.linear_bytes,
                                        static_cast<double>(EmbeddingParams(s)) * u.root_bytes);
        out.push_back({"zero3_gather", Msg("ZeRO-3 gathered parameters"),
                       SaturatingBytes(largest + 0.9 * h2 * u.linear_bytes),
                       Msg("the largest parameter + prefetch bucket 0.9 x {}^2 x {:.4g} B",
                           s.hidden_size, u.linear_bytes),
                       true, false});
      }
      out.push_back({"zero_reduce_bucket", Msg("ZeRO reduce bucket"), SaturatingBytes(h2 * c),
                     Msg("reduce_bucket_size {}^2 x {:g} B", s.hidden_size, c), true, false});
      if (u.param_bytes < 4) {
        out.push_back({"zero_fp32_grads", Msg("ZeRO fp32 gradient partition (step)"),
                       SaturatingBytes(static_cast<double>(whole.trainable_params) * 4 /
                                       static_cast<double>(p.devices)),
                       Msg("{} trainable x 4 B / {} devices",
                           FormatParamCount(whole.trainable_params), p.devices),
                       false, true});
      }
      break;
    }
  }
  return out;
}

// What the sharding assumes, one line each.
std::vector<Message> ShardingNotes(const Parallelism& p) {
  std::vector<Message> notes;
  switch (p.sharding) {
    case Sharding::kDdp:
      notes.push_back(
          Msg("ddp: every node holds the whole model, its gradients and optimizer states, and "
              "the reducer's buckets copy every gradient (gradient_as_bucket_view off, the "
              "default)"));
      break;
    case Sharding::kFsdp:
      notes.push_back(
          Msg("fsdp: parameters (the frozen base too), gradients and optimizer states are split "
              "{} ways; the root unit (embeddings, lm_head) stays whole through forward and "
              "backward, and two decoder layers are whole at a time (the one computing, the one "
              "prefetched)",
              p.devices));
      break;
    case Sharding::kZero2:
    case Sharding::kZero3:
      notes.push_back(
          Msg("{}: DeepSpeed keeps an fp32 master partition and fp32 optimizer states: planned "
              "as --master-weights; buckets at Transformers' \"auto\" sizes",
              Name(p.sharding)));
      break;
  }
  if (ShardsParams(p.sharding)) {
    notes.push_back(
        Msg("the load peak assumes each node loads only its share (sharded loading, or rank 0 "
            "streaming tensors to the others); a loader that builds the whole model on every "
            "node first needs the whole model in each node's pool"));
  }
  notes.push_back(
      Msg("data parallel only: each node runs its own micro-batch, so activations and logits "
          "are one device's; tensor parallelism over the link between Sparks is not planned"));
  return notes;
}

}  // namespace

Result<Sharding> ParseSharding(std::string_view s) {
  const std::string key = AsciiLower(s);
  for (const auto& [name, value] : kShardings) {
    if (name == key) return value;
  }
  return Error{
      Msg("unknown {0} '{1}' (expected {2})", MsgFrom(N_("sharding")), s, "ddp|fsdp|zero2|zero3")};
}

std::string_view Name(Sharding s) {
  for (const auto& [name, v] : kShardings) {
    if (v == s) return name;
  }
  return "?";
}

Workload ShardedWorkload(const Workload& w, const Parallelism& p) {
  Workload out = w;
  if (p.devices > 1 && IsZero(p.sharding)) out.master_weights = true;
  return out;
}

uint64_t ShareOf(uint64_t bytes, int64_t ways) {
  const uint64_t d = static_cast<uint64_t>(std::max<int64_t>(1, ways));
  return bytes / d + (bytes % d != 0);
}

uint64_t NodeShares::backward_buffers_bytes() const {
  uint64_t sum = 0;
  for (const NodeBuffer& b : buffers) sum += b.at_backward ? b.bytes : 0;
  return sum;
}

uint64_t NodeShares::step_buffers_bytes() const {
  uint64_t sum = 0;
  for (const NodeBuffer& b : buffers) sum += b.at_step ? b.bytes : 0;
  return sum;
}

NodeShares SharesOfNode(const ModelSpec& s, const Workload& w, const Parallelism& p,
                        const Footprint& whole) {
  NodeShares out;
  if (p.devices <= 1) return out;
  out.devices = p.devices;
  out.sharding = p.sharding;
  if (ShardsParams(p.sharding)) out.weights_ways = p.devices;
  if (ShardsStates(p.sharding)) out.states_ways = p.devices;
  out.first_grad_in_buffers = p.sharding == Sharding::kFsdp;
  const Units u = ModelUnits(s, w, whole);
  if (p.sharding == Sharding::kFsdp) {
    out.layer_unit_params = u.layer_params;
    out.root_unit_params = u.root_params;
  }
  out.buffers = NodeBuffers(s, w, p, whole, u);
  out.notes = ShardingNotes(p);
  return out;
}

}  // namespace headroom
