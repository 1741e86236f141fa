// Sharding: a run spread over N devices (N DGX Sparks, one GPU each), and what each device
// then holds. The single-device footprint (plan/footprint.h) is computed first; this module
// rewrites its terms into one node's share, by the mechanism of each way of spreading it:
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
#include <string_view>

#include "base/result.h"
#include "model/model_spec.h"
#include "plan/workload.h"

namespace headroom {

struct Footprint;
struct FootprintOptions;

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

// Rewrites `f`, the single-device footprint of (spec, w, options), into one node's share
// under options.parallel (devices > 1): terms, peaks, overhead and load peak; sets
// f->sharding and adds the notes. `w` is ShardedWorkload's.
void ShardFootprint(const ModelSpec& spec, const Workload& w, const FootprintOptions& options,
                    Footprint* f);

}  // namespace headroom
