// Footprint: the memory a training step needs, term by term, each with its formula.
//
// The terms follow what PyTorch actually holds (docs/plan-formulas.md has the derivation
// and the sources): weights by dtype with quantization constants; gradients of the
// trainable parameters; optimizer states and the optimizer step's transient buffer;
// activations saved per layer (the tensor inventory of a Hugging Face decoder layer under
// autograd, with and without gradient checkpointing, SDPA or eager attention); logits and
// loss; framework overhead; and the model-load transient.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/message.h"
#include "model/model_spec.h"
#include "plan/sharding.h"
#include "plan/workload.h"

namespace headroom {

// One line of the breakdown: a named amount with the formula that produced it. The label
// and the formula are message values (base/message.h): English in plan --json, translated
// on the terminal.
struct FootprintTerm {
  std::string key;  // stable identifier (JSON): "weights", "activations", ...
  Message label;    // "weights", "optimizer (adamw)"
  uint64_t bytes = 0;
  Message formula;  // "6.48B x 0.516 B + 0.26B x 2 B"
};

struct Footprint {
  uint64_t total_params = 0;
  uint64_t trainable_params = 0;
  uint64_t quantized_params = 0;  // parameters stored in 4 or 8 bits

  // The five terms every plan reports (bytes).
  uint64_t weights_bytes = 0;      // model weights as held during training (+ DPO reference)
  uint64_t gradients_bytes = 0;    // gradients of the trainable parameters
  uint64_t optimizer_bytes = 0;    // optimizer states (+ fp32 master copy)
  uint64_t activations_bytes = 0;  // saved activations + logits/loss at the backward peak
  uint64_t overhead_bytes = 0;     // CUDA context + allocator slack (+ host process, unified)

  // Parts of the above, reported separately.
  uint64_t optimizer_step_bytes = 0;  // transient during optimizer.step()
  uint64_t layer_activations_bytes = 0;
  uint64_t logits_bytes = 0;     // logits and loss at their peak
  uint64_t reference_bytes = 0;  // DPO: frozen reference weights (full fine-tune only)
  uint64_t rollout_bytes = 0;    // GRPO: the inference engine's share of the pool
  uint64_t cuda_context_bytes = 0;
  uint64_t allocator_slack_bytes = 0;
  uint64_t host_process_bytes = 0;
  uint64_t load_transient_bytes = 0;  // shard pages + quantization buffer while loading
  uint64_t load_quantize_bytes = 0;   // of which on the device: quantizing the largest weight
  uint64_t dequant_bytes = 0;         // 4-bit: the weight dequantized for a matmul, at the peak
  uint64_t first_grad_bytes = 0;      // full fine-tune: lm_head's gradient beside the logits
  uint64_t offloaded_bytes = 0;       // what the stack offloads to the host (checkpoints)
  uint64_t host_offload_bytes = 0;    // the same on a discrete GPU: host memory, not the peak

  // Peaks (bytes).
  uint64_t backward_peak_bytes = 0;  // tensors at the start of backward
  uint64_t step_peak_bytes = 0;      // tensors during optimizer.step()
  uint64_t tensor_peak_bytes = 0;    // max of the two: compare with max_memory_allocated
  uint64_t steady_peak_bytes = 0;    // tensor peak + overhead + rollout
  uint64_t load_peak_bytes = 0;      // while loading the model
  // A discrete GPU: what the run holds in host memory, outside the device's peaks (the host
  // process + offloaded checkpoints). 0 on unified memory: both are in the one pool, in the
  // peaks above.
  uint64_t host_peak_bytes = 0;
  uint64_t peak_bytes() const { return std::max(steady_peak_bytes, load_peak_bytes); }

  std::vector<FootprintTerm> terms;  // display order, each with its formula
  std::vector<Message> notes;        // assumptions worth a line (which layers stay bf16, ...)

  // Set when the run is spread over devices > 1 (plan/sharding.h): every figure above is
  // then one node's share (the whole run's terms are kept only as the shares' inputs).
  std::optional<ShardingInfo> sharding;
};

// Optional knobs of the model that are not training choices.
struct FootprintOptions {
  // Pool size for GRPO's rollout share (MemTotal, or the budget when MemTotal is unknown).
  uint64_t pool_bytes = 0;
  // Overrides the framework overhead (CUDA context + allocator slack + host process).
  std::optional<uint64_t> overhead_bytes;
  // --devices and --sharding: the footprint is one node's share (plan/sharding.h).
  Parallelism parallel;
  // One pool shared by the GPU and the host (GB10): what a stack "offloads to the CPU" stays
  // in it and is counted in the peak, and so does the host process. false (a discrete GPU):
  // offloaded bytes and the host process are host memory, on their own lines
  // (Footprint::host_offload_bytes, host_process_bytes; their sum host_peak_bytes), outside
  // the device's peaks.
  bool unified_memory = true;
};

// The footprint of one node: the whole run's terms, then (NodeFootprint) its shares of them
// and every peak. One device is shares of 1: the same arithmetic.
Footprint ComputeFootprint(const ModelSpec& spec, const Workload& workload,
                           const FootprintOptions& options = {});

// Every peak, computed in this one place. `f` holds the whole run's terms as one device holds
// them (term bytes, first gradient, dequantized weight, rollout, load transient, breakdown);
// its peaks are not read. Applies the node's shares under options.parallel (SharesOfNode,
// plan/sharding.h: shares of 1 and no buffers on one device) to the terms and the breakdown,
// computes the backward, step, tensor, steady and load peaks from them with the workload's
// allocator slack, and with devices > 1 sets f->sharding (single_device_peak_bytes: the same
// terms on one device) and adds the sharding's notes. `workload` is ShardedWorkload's.
void NodeFootprint(const ModelSpec& spec, const Workload& workload, const FootprintOptions& options,
                   Footprint* f);

// The allocator slack the overhead holds: this share of the tensor peak.
inline constexpr double kAllocatorSlackFraction = 0.10;

// What torch.cuda.max_memory_reserved reaches in training when the stack keeps the caching
// allocator's segments from the load (no torch.cuda.empty_cache between load and training,
// as in torchtune's single-device recipes; resetting the peak stats resets the peak to the
// current reservation): the larger of the training tensor peak and the load's device tensors
// (weights + the quantizer's buffers), plus the allocator slack on it.
uint64_t ReservedPeakBytes(const Footprint& f, const Workload& w);

// Bytes per parameter of the decoder's linear weights as stored (quantization constants
// included): what an FSDP unit of them occupies.
double StoredLinearBytesPerParam(const Workload& workload);

// Trainable parameters: all for a full fine-tune; LoRA: rank x (in + out) per targeted
// linear layer, from the real shapes (grouped-query k/v, every MoE expert).
uint64_t TrainableParams(const ModelSpec& spec, const Workload& workload);

}  // namespace headroom
