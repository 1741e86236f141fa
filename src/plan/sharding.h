// Sharding: a run spread over N devices (N DGX Sparks, one GPU each), and what each device
// then holds. This module says only that: which share of the run's weights, gradients,
// optimizer states and step transient one node keeps, and the sharding's own buffers
// (NodeShares). The footprint (plan/footprint.h) computes every peak from those shares, in
// one place; one device holds shares of 1 and no buffers. The mechanisms:
//
//   ddp    every node holds the whole model, its gradients and optimizer states, plus the
//          reducer's gradient buckets (torch/nn/parallel/distributed.py,
//          torch/csrc/distributed/c10d/reducer.cpp)
//   fsdp   full shard (PyTorch FSDP FULL_SHARD / FSDP2 fully_shard): parameters, gradients
//          and optimizer states split N ways, plus the unsharded units in flight: the root
//          unit (embeddings, lm_head) for the whole forward and backward, and two decoder
//          layers (the one computing and the one prefetched) with their gradients before
//          the reduce-scatter
//   zero2  DeepSpeed ZeRO stage 2: gradients and optimizer states split, parameters whole,
//          an fp32 master partition, a contiguous reduce bucket
//   zero3  DeepSpeed ZeRO stage 3: parameters split too, gathered one module at a time with
//          a prefetch bucket
//
// The formulas and their sources are in docs/plan-formulas.md ("Sharding over N devices").
// Data parallel only: tensor parallelism over the link between two Sparks is never planned.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/message.h"
#include "base/result.h"
#include "model/model_spec.h"
#include "plan/workload.h"

namespace headroom {

struct Footprint;

enum class Sharding { kDdp, kFsdp, kZero2, kZero3 };

// "ddp", "fsdp", "zero2", "zero3" (also "full_shard", "zero-2", "zero-3"); the error lists
// the names.
Result<Sharding> ParseSharding(std::string_view s);
std::string_view Name(Sharding s);

// --devices past this is refused (a usage error): far past any cluster of Sparks, and it
// keeps the shares above a byte.
inline constexpr int64_t kMaxDevices = 1024;

struct Parallelism {
  int64_t devices = 1;
  Sharding sharding = Sharding::kDdp;
  bool sharding_given = false;  // --sharding was given (said when it changes nothing)
  bool operator==(const Parallelism&) const = default;
};

// What sharding did, kept in the footprint for the view and plan --json ("parallel").
struct ShardingInfo {
  int64_t devices = 1;
  Sharding sharding = Sharding::kDdp;
  uint64_t single_device_peak_bytes = 0;  // the same run on one device
  uint64_t buffers_bytes = 0;             // the sharding's own buffers at the tensor peak
  uint64_t layer_unit_params = 0;         // fsdp: the largest decoder layer
  uint64_t root_unit_params = 0;          // fsdp: embeddings and lm_head
};

// The workload as the sharding runs it: DeepSpeed ZeRO (zero2, zero3) with bf16 keeps an
// fp32 master partition and fp32 optimizer states (deepspeed/runtime/zero/stage_1_and_2.py
// single_partition_of_fp32_groups, stage3.py fp32_partitioned_groups_flat), so they are
// planned with --master-weights. Anything else, and one device: the workload unchanged.
Workload ShardedWorkload(const Workload& w, const Parallelism& p);

// One of a node's own buffers: a line of the breakdown (its key, label and formula) and
// when it is alive.
struct NodeBuffer {
  std::string key;  // "ddp_buckets", "fsdp_gather", ...
  Message label;
  uint64_t bytes = 0;
  Message formula;
  bool at_backward = false;  // alive at the start of backward
  bool at_step = false;      // alive during optimizer.step()
};

// What one node holds of the run: each whole term is split this many ways (share(x) =
// ceil(x / ways), a flat parameter padded to a multiple of N), plus the sharding's own
// buffers. NodeShares{} is one device: shares of 1, no buffers.
struct NodeShares {
  int64_t weights_ways = 1;  // weights and the DPO reference
  int64_t states_ways = 1;   // gradients, optimizer states and the step's transient
  // fsdp: the root unit's gradient, among the buffers, holds the full fine-tune's first
  // gradient (lm_head's), so the footprint does not count it again.
  bool first_grad_in_buffers = false;
  std::vector<NodeBuffer> buffers;
  std::vector<Message> notes;  // what the sharding assumes, one line each
  int64_t devices = 1;
  Sharding sharding = Sharding::kDdp;
  uint64_t layer_unit_params = 0;  // fsdp: the largest decoder layer
  uint64_t root_unit_params = 0;   // fsdp: embeddings and lm_head
  bool per_node() const { return devices > 1; }
  uint64_t backward_buffers_bytes() const;  // the buffers alive at the start of backward
  uint64_t step_buffers_bytes() const;      // the buffers alive during the step
};

// share(x): one node's part of a whole term split `ways` ways, rounded up.
uint64_t ShareOf(uint64_t bytes, int64_t ways);

// What one node holds under `p` of the run whose whole terms are `whole` (term bytes and
// trainable_params: the footprint of `w` on one device, before peaks). `w` is
// ShardedWorkload's. p.devices <= 1: NodeShares{}.
NodeShares SharesOfNode(const ModelSpec& spec, const Workload& w, const Parallelism& p,
                        const Footprint& whole);

}  // namespace headroom
