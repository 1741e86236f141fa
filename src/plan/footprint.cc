// Implementation notes. All arithmetic is in double and rounded once per term; the terms
// are bytes. Constants and where they come from:
//  - NF4 (bitsandbytes): 4-bit codes in blocks of 64 with an fp32 absmax per block
//    (0.5 + 4/64 = 0.5625 B/param); double quantization stores the absmax in 8 bits with
//    an fp32 constant per 256 blocks (0.5 + 1/64 + 4/(64*256) = 0.5159 B/param).
//  - NVFP4: 4-bit codes in blocks of 16 with an fp8 (E4M3) scale per block, plus one fp32
//    scale per tensor: 0.5 + 1/16 = 0.5625 B/param.
//  - int4 (GPTQ/AWQ style): groups of 128 with an fp16 scale and a packed zero point:
//    0.5 + 2.5/128 B/param. fp8/int8: 1 B/param, scales negligible.
//  - Embeddings and lm_head stay in the compute dtype under QLoRA in Hugging Face
//    (bitsandbytes skips lm_head) unless quantize_lm_head; norms, biases and MoE routers
//    are never quantized.
//  - AdamW: two states per trainable parameter in the parameter's dtype, fp32 with master
//    weights (which add a 4 B/param master copy). bitsandbytes 8-bit AdamW: two 1-byte
//    states plus an fp32 absmax per 256-element block. SGD: one momentum buffer. Adafactor:
//    factored second moment (rows + columns per matrix, fp32), no first moment.
//  - foreach AdamW/SGD steps hold about one parameter-sized buffer (torchtune RFC #389 ran
//    out of memory with foreach and fit without it); a for-loop step holds the largest
//    single tensor's worth; a fused step nothing worth counting.
//  - Overhead: CUDA context and library handles 0.5-1 GB (docs/sources.md section 4), 800 MiB
//    used; allocator slack 10 % of the tensor peak (reserved runs 5-20 % above allocated,
//    same source), or the stack's 1/(2d) with expandable segments, on one device and on
//    each node alike (NodePeaks computes every peak); the host process (Python, torch,
//    CUDA libraries, tokenizer, data loader) 1.5 GiB, which on unified memory draws from
//    the same pool.
//  - Load: Hugging Face writes shards of at most 5 GB; while one shard is read its mmap'd
//    pages and the device copies coexist in the one pool; QLoRA quantizes each weight on the
//    device, one at a time, so the quantizer's buffers for the largest weight are transient.
//    bitsandbytes: the weight's bf16 copy (2 B/element). torchao's NF4Tensor.from_tensor
//    (pytorch/ao torchao/quantization/quantize_/workflows/nf4/nf4_tensor.py): the incoming
//    tensor on the device, its blocks scaled by their absmax (both in its dtype, c), one uint8
//    code per element, and per chunk of 1024^2 elements the [chunk, 16] difference with the
//    NF4 values and its abs (2 x 16 x c B per element of the chunk): 2c + 1 B/element +
//    64 MiB in bf16. torchao 0.1 (tag v0.1, torchao/dtypes/nf4tensor.py, pinned by torchtune
//    from 2024-04-04 to 2024-06-26) casts to bf16 and takes the difference over the whole
//    tensor at once: 2 + 2 + 2 x 16 x 2 = 68 B/element (docs/plan-formulas.md, "Peaks").
//  - Labels, formulas and notes are message values (base/message.h), rendered in English
//    for plan --json and translated on the terminal; `key` is the identifier. A formula
//    built in parts is the parts joined, each part a message of its own.
#include "plan/footprint.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "base/bytes.h"
#include "plan/activations.h"

namespace headroom {
namespace {
// `a` then `b`, as one message (a formula built in parts).
Message Then(Message a, Message b) { return JoinMessages({std::move(a), std::move(b)}, ""); }
}  // namespace
namespace {

constexpr double kNf4BytesPerParam = 0.5 + 4.0 / 64;
constexpr double kNf4DoubleQuantBytesPerParam = 0.5 + 1.0 / 64 + 4.0 / (64 * 256);
constexpr double kNvfp4BytesPerParam = 0.5 + 1.0 / 16;
constexpr double kInt4BytesPerParam = 0.5 + 2.5 / 128;
constexpr double kAdam8bitBytesPerParam = 2 + 2 * 4.0 / 256;
constexpr uint64_t kCudaContextBytes = 800 * kMiB;
constexpr double kAllocatorSlack = kAllocatorSlackFraction;
constexpr uint64_t kHostProcessBytes = 3 * kGiB / 2;
constexpr uint64_t kMaxShardBytes = 5'000'000'000ULL;
constexpr double kTorchaoChunkElements = 1024.0 * 1024.0;  // torchao nf4_tensor.py CHUNK_SIZE
constexpr double kNf4Values = 16;  // the NF4 code book each element is compared with

uint64_t Round(double v) { return SaturatingBytes(v); }

// The allocator's reserve above the tensors: 10 % with the default caching allocator (its
// segments fragment); with expandable segments there is one growing segment per stream and
// what remains is the rounding of each block to 1/d of its power-of-two interval
// (roundup_power2_divisions d): half a step on average, 1/(2d) of the size.
double AllocatorSlack(const Workload& w) {
  if (w.expandable_segments && w.roundup_power2_divisions > 0)
    return 1.0 / (2.0 * w.roundup_power2_divisions);
  return kAllocatorSlack;
}

std::string P(uint64_t params) { return FormatParamCount(params); }

// Bytes per parameter of quantized linear weights.
double QuantizedBytesPerParam(const Workload& w) {
  switch (w.weight_dtype) {
    case DType::kNf4:
      return w.double_quant ? kNf4DoubleQuantBytesPerParam : kNf4BytesPerParam;
    case DType::kNvfp4:
      return kNvfp4BytesPerParam;
    case DType::kInt4:
      return kInt4BytesPerParam;
    default:
      return DTypeBytes(w.weight_dtype);
  }
}

bool IsQuantized(DType d) {
  return d == DType::kNf4 || d == DType::kInt4 || d == DType::kNvfp4 || d == DType::kFp8 ||
         d == DType::kInt8;
}

// Sum over all layers of a per-linear quantity.
template <typename F>
double SumOverLinears(const ModelSpec& s, F per_linear) {
  const int64_t dense = s.num_experts > 0 ? s.num_dense_layers : s.num_layers;
  double total = 0;
  for (const auto& l : LayerLinears(s, true)) total += static_cast<double>(dense) * per_linear(l);
  if (s.num_experts > 0) {
    for (const auto& l : LayerLinears(s, false)) {
      total += static_cast<double>(s.num_layers - dense) * per_linear(l);
    }
  }
  return total;
}

bool Targeted(const Workload& w, const LinearShape& l) {
  return std::find(w.lora_targets.begin(), w.lora_targets.end(), l.name) != w.lora_targets.end();
}

uint64_t LargestLinearParams(const ModelSpec& s) {
  uint64_t largest = 0;
  for (bool dense : {true, false}) {
    for (const auto& l : LayerLinears(s, dense)) {
      largest = std::max(largest, static_cast<uint64_t>(l.in_features * l.out_features));
    }
  }
  return largest;
}

// The largest weight a 4-bit load quantizes: the decoder's linears (only the LoRA-wrapped
// ones for torchtune), and lm_head where the stack quantizes it (litgpt).
uint64_t LargestQuantizedParams(const ModelSpec& s, const Workload& w) {
  uint64_t largest = 0;
  const bool only_targets = w.quantize_only_targets && IsLora(w.method);
  for (bool dense : {true, false}) {
    for (const auto& l : LayerLinears(s, dense)) {
      if (only_targets && !Targeted(w, l)) continue;
      largest = std::max(largest, static_cast<uint64_t>(l.in_features * l.out_features));
    }
  }
  if (w.quantize_lm_head) largest = std::max(largest, LmHeadParams(s));
  return largest;
}

}  // namespace

uint64_t ReservedPeakBytes(const Footprint& f, const Workload& w) {
  const uint64_t peak = std::max(f.tensor_peak_bytes, f.weights_bytes + f.load_quantize_bytes);
  return peak + Round(static_cast<double>(peak) * AllocatorSlack(w));
}

double StoredLinearBytesPerParam(const Workload& w) {
  return IsQuantized(w.weight_dtype) ? QuantizedBytesPerParam(w) : DTypeBytes(w.weight_dtype);
}

uint64_t TrainableParams(const ModelSpec& s, const Workload& w) {
  if (w.method == Method::kFull) return TotalParams(s);
  const double r = static_cast<double>(w.lora_rank);
  return Round(SumOverLinears(s, [&](const LinearShape& l) {
    if (!Targeted(w, l) || (l.is_expert && ExpertsAreFused(s))) return 0.0;
    return r * static_cast<double>(l.in_features + l.out_features) * static_cast<double>(l.count);
  }));
}

namespace {

// A term's bytes before rounding, and how they were reached.
struct Part {
  double bytes = 0;
  Message formula;
};

// Weights. Quantized formats cover the decoder linears (and lm_head on request); the rest
// stays in the compute dtype. LoRA adapters: PEFT keeps them in fp32
// (autocast_adapter_dtype) whatever the base. Sets f.quantized_params and its note.
Part Weights(const ModelSpec& s, const Workload& w, double param_bytes, Footprint& f) {
  Part out;
  if (IsQuantized(w.weight_dtype)) {
    // PEFT's prepare_model_for_kbit_training (TRL, axolotl) makes every other parameter fp32.
    const double c = w.upcast_unquantized ? 4.0 : DTypeBytes(w.compute_dtype);
    const uint64_t head = w.quantize_lm_head ? LmHeadParams(s) : 0;
    // torchtune quantizes only the linears LoRA wraps; bitsandbytes loads quantize them all.
    const uint64_t linears =
        w.quantize_only_targets && IsLora(w.method)
            ? Round(SumOverLinears(s,
                                   [&](const LinearShape& l) {
                                     return Targeted(w, l)
                                                ? static_cast<double>(l.in_features) *
                                                      static_cast<double>(l.out_features) *
                                                      static_cast<double>(l.count)
                                                : 0.0;
                                   }))
            : LinearParams(s);
    f.quantized_params = std::min<uint64_t>(linears + head, f.total_params);
    const uint64_t rest = f.total_params - f.quantized_params;
    const double qb = QuantizedBytesPerParam(w);
    out.bytes = static_cast<double>(f.quantized_params) * qb + static_cast<double>(rest) * c;
    out.formula =
        Message::Literal(fmt::format("{} x {:.4f} B ({}) + {} x {:g} B", P(f.quantized_params), qb,
                                     Name(w.weight_dtype), P(rest), c));
    if (w.upcast_unquantized) {
      f.notes.push_back(
          Msg("{}: prepare_model_for_kbit_training casts every non-quantized parameter "
              "(embeddings, lm_head, norms) to fp32, and the residual stream stays fp32",
              Name(w.framework)));
    }
    if (w.quantize_only_targets && IsLora(w.method)) {
      f.notes.push_back(
          Msg("{}: only the linear layers LoRA wraps are quantized; the others stay {}",
              Name(w.framework), Name(w.compute_dtype)));
    }
    f.notes.push_back(
        w.quantize_lm_head
            ? Msg("{} covers the decoder's linear layers and lm_head; embeddings, norms and biases "
                  "stay {}",
                  Name(w.weight_dtype), w.upcast_unquantized ? "fp32" : Name(w.compute_dtype))
            : Msg("{} covers the decoder's linear layers; embeddings and lm_head, norms and biases "
                  "stay {}",
                  Name(w.weight_dtype), w.upcast_unquantized ? "fp32" : Name(w.compute_dtype)));
  } else {
    const double b = DTypeBytes(w.weight_dtype);
    out.bytes = static_cast<double>(f.total_params) * b;
    out.formula = Message::Literal(
        fmt::format("{} x {:g} B ({})", P(f.total_params), b, Name(w.weight_dtype)));
  }
  if (IsLora(w.method)) {
    out.bytes += static_cast<double>(f.trainable_params) * param_bytes;
    out.formula = Then(std::move(out.formula),
                       Msg(" + adapters {} x {:g} B", P(f.trainable_params), param_bytes));
  }
  return out;
}

// Adafactor's factored second moment: rows + columns of every trainable matrix.
double FactoredElements(const ModelSpec& s, const Workload& w) {
  if (w.method == Method::kFull) {
    double factored = SumOverLinears(s, [](const LinearShape& l) {
      return static_cast<double>(l.in_features + l.out_features) * static_cast<double>(l.count);
    });
    factored += static_cast<double>(s.vocab_size + s.hidden_size) * (s.tie_word_embeddings ? 1 : 2);
    return factored;
  }
  const double r = static_cast<double>(w.lora_rank);
  return SumOverLinears(s, [&](const LinearShape& l) {
    if (!Targeted(w, l)) return 0.0;
    return (static_cast<double>(l.in_features + l.out_features) + 2 * r) *
           static_cast<double>(l.count);
  });
}

// Optimizer states, and the fp32 master copy where there is one.
Part OptimizerStates(const ModelSpec& s, const Workload& w, uint64_t trainable_params,
                     double param_bytes, double state_bytes) {
  const double trainable = static_cast<double>(trainable_params);
  Part out;
  switch (w.optimizer) {
    case Optimizer::kAdamW:
      out = {2 * trainable * state_bytes,
             Msg("2 states x {} x {:g} B", P(trainable_params), state_bytes)};
      break;
    case Optimizer::kAdamW8bit:
      out = {trainable * kAdam8bitBytesPerParam,
             Msg("{} x {:.4f} B (two 8-bit states + block absmax)", P(trainable_params),
                 kAdam8bitBytesPerParam)};
      break;
    case Optimizer::kSgd:
      out = {trainable * state_bytes,
             Msg("momentum {} x {:g} B", P(trainable_params), state_bytes)};
      break;
    case Optimizer::kAdafactor:
      out = {4 * FactoredElements(s, w), Msg("rows + columns of each trainable matrix x 4 B")};
      break;
  }
  if (w.master_weights && param_bytes < 4) {
    out.bytes += 4 * trainable;
    out.formula =
        Then(std::move(out.formula), Msg(" + fp32 master copy {} x 4 B", P(trainable_params)));
  }
  return out;
}

// The optimizer step's transient.
Part StepTransient(const ModelSpec& s, const Workload& w, uint64_t trainable_params,
                   double state_bytes) {
  if (w.optimizer == Optimizer::kAdamW8bit) return {0, Msg("8-bit: fused kernel, none")};
  switch (w.optimizer_step) {
    case OptimizerStep::kForeach:
      // TRANSLATORS: foreach, loop and fused are values of --optimizer-step: keep them.
      return {static_cast<double>(trainable_params) * state_bytes,
              Msg("foreach: one buffer {} x {:g} B", P(trainable_params), state_bytes)};
    case OptimizerStep::kLoop: {
      const uint64_t largest = w.method == Method::kFull
                                   ? std::max(LargestLinearParams(s), EmbeddingParams(s))
                                   : trainable_params / std::max<int64_t>(1, s.num_layers);
      return {static_cast<double>(largest) * state_bytes, Msg("loop: the largest tensor")};
    }
    case OptimizerStep::kFused:
      break;
  }
  return {0, Msg("fused: none")};
}

// The device buffers of quantizing the largest weight at load (the notes at the top).
uint64_t QuantizeTransient(const ModelSpec& s, const Workload& w) {
  if (!IsQuantized(w.weight_dtype)) return 0;
  const double c = DTypeBytes(w.compute_dtype);
  switch (w.quantizer) {
    case Quantizer::kBitsandbytes:
      return Round(static_cast<double>(LargestLinearParams(s)) * 2);
    case Quantizer::kTorchao: {
      const double n = static_cast<double>(LargestQuantizedParams(s, w));
      const double chunk = std::min(n, kTorchaoChunkElements);
      // Input and scaled blocks (c each) and the codes (1 B); then either a chunk's
      // difference and abs, or the packing of the codes into half-size bytes (twice n/2 B).
      return Round(n * (2 * c + 1) + std::max(2 * kNf4Values * c * chunk, n));
    }
    case Quantizer::kTorchaoWholeTensor: {
      const double n = static_cast<double>(LargestQuantizedParams(s, w));
      // torchao 0.1's to_nf4 casts to bf16 first (a copy unless the input is bf16).
      const double cast = w.compute_dtype == DType::kBf16 ? 0 : 2;
      return Round(n * (c + cast + 2 + 2 * kNf4Values * 2));
    }
  }
  return 0;
}

// Load transient: one shard's pages beside the device copy, and for quantized loading the
// quantizer's buffers for the largest weight. Returns (shard, quantization transient).
std::pair<uint64_t, uint64_t> LoadTransient(const ModelSpec& s, const Workload& w, Footprint& f) {
  const uint64_t checkpoint = s.checkpoint_bytes.value_or(f.total_params * 2);
  const uint64_t shard = std::min(checkpoint, kMaxShardBytes);
  const uint64_t quant_copy = QuantizeTransient(s, w);
  f.load_quantize_bytes = quant_copy;
  f.load_transient_bytes = shard + quant_copy;
  return {shard, quant_copy};
}

// The overhead's line of the breakdown, from the figures NodePeaks set.
FootprintTerm OverheadTerm(const Workload& w, const FootprintOptions& opt, const Footprint& f) {
  if (opt.overhead_bytes) {
    return {"overhead", Msg("framework overhead"), f.overhead_bytes,
            Message::Literal("--overhead")};
  }
  const bool fixed = AllocatorSlack(w) == kAllocatorSlack;
  if (!opt.unified_memory) {
    // A discrete GPU: the host process is host memory, on a line of its own (NodeTerms).
    return {"overhead", Msg("framework overhead"), f.overhead_bytes,
            fixed ? Msg("CUDA context {} + allocator slack 10 % of tensors {}",
                        GiB(f.cuda_context_bytes), GiB(f.allocator_slack_bytes))
                  : Msg("CUDA context {} + allocator slack {:.1f} % of tensors {} (expandable "
                        "segments, block rounding 1/{})",
                        GiB(f.cuda_context_bytes), 100 * AllocatorSlack(w),
                        GiB(f.allocator_slack_bytes), w.roundup_power2_divisions)};
  }
  return {
      "overhead", Msg("framework overhead"), f.overhead_bytes,
      fixed
          ? Msg("CUDA context {} + allocator slack 10 % of tensors {} + host process {}",
                GiB(f.cuda_context_bytes), GiB(f.allocator_slack_bytes), GiB(f.host_process_bytes))
          : Msg("CUDA context {} + allocator slack {:.1f} % of tensors {} (expandable "
                "segments, block rounding 1/{}) + host process {}",
                GiB(f.cuda_context_bytes), 100 * AllocatorSlack(w), GiB(f.allocator_slack_bytes),
                w.roundup_power2_divisions, GiB(f.host_process_bytes))};
}

// The host process's share of the device's pool: all of it on unified memory, none on a
// discrete GPU (host memory: Footprint::host_peak_bytes).
uint64_t HostInPool(const FootprintOptions& opt, const Footprint& f) {
  return opt.unified_memory ? f.host_process_bytes : 0;
}

// Every peak of one node: its shares of the whole terms in `f` (one device: shares of 1), then
// the peaks from them. At the start of backward the states exist (from step 2 on), gradients
// are being created (set_to_none frees them after each step), and all activations are alive,
// with a 4-bit weight dequantized and a full fine-tune's first gradient (lm_head or tied
// embeddings, while the logits are still alive). During the step: weights, gradients, states
// and the step's transient. Each with the sharding's buffers alive then; then the overhead
// (the allocator slack a share of this tensor peak) and GRPO's rollout engine.
void NodePeaks(const Workload& w, const FootprintOptions& opt, const NodeShares& n, Footprint& f) {
  f.weights_bytes = ShareOf(f.weights_bytes, n.weights_ways);
  f.reference_bytes = ShareOf(f.reference_bytes, n.weights_ways);
  f.gradients_bytes = ShareOf(f.gradients_bytes, n.states_ways);
  f.optimizer_bytes = ShareOf(f.optimizer_bytes, n.states_ways);
  f.optimizer_step_bytes = ShareOf(f.optimizer_step_bytes, n.states_ways);
  f.backward_peak_bytes = f.weights_bytes + f.optimizer_bytes + f.activations_bytes +
                          f.dequant_bytes + (n.first_grad_in_buffers ? 0 : f.first_grad_bytes) +
                          n.backward_buffers_bytes();
  f.step_peak_bytes = f.weights_bytes + f.gradients_bytes + f.optimizer_bytes +
                      f.optimizer_step_bytes + n.step_buffers_bytes();
  f.tensor_peak_bytes = std::max(f.backward_peak_bytes, f.step_peak_bytes);
  if (opt.overhead_bytes) {
    f.overhead_bytes = *opt.overhead_bytes;
  } else {
    f.cuda_context_bytes = kCudaContextBytes;
    f.allocator_slack_bytes = Round(static_cast<double>(f.tensor_peak_bytes) * AllocatorSlack(w));
    f.host_process_bytes = kHostProcessBytes;
    f.overhead_bytes = f.cuda_context_bytes + f.allocator_slack_bytes + HostInPool(opt, f);
  }
  f.steady_peak_bytes = f.tensor_peak_bytes + f.overhead_bytes + f.rollout_bytes;
  const uint64_t load_overhead =
      opt.overhead_bytes ? *opt.overhead_bytes : f.cuda_context_bytes + HostInPool(opt, f);
  f.load_peak_bytes = f.weights_bytes + f.load_transient_bytes + load_overhead + f.rollout_bytes;
  f.host_peak_bytes = opt.unified_memory ? 0 : f.host_process_bytes + f.host_offload_bytes;
}

// The breakdown as one node holds it: the shared terms with their share, the sharding's
// buffers after the optimizer step's transient, the overhead from the node's peak.
void NodeTerms(const Workload& w, const FootprintOptions& opt, const NodeShares& n, Footprint& f) {
  std::vector<FootprintTerm> terms;
  const Message share = Msg(" / {} devices", n.devices);
  for (FootprintTerm& t : f.terms) {
    const bool weights = t.key == "weights";
    const bool states = t.key == "gradients" || t.key == "optimizer" || t.key == "optimizer_step";
    if (weights) t.bytes = f.weights_bytes;
    if (t.key == "gradients") t.bytes = f.gradients_bytes;
    if (t.key == "optimizer") t.bytes = f.optimizer_bytes;
    if (t.key == "optimizer_step") t.bytes = f.optimizer_step_bytes;
    if ((weights && n.weights_ways > 1) || (states && n.states_ways > 1)) {
      t.formula = JoinMessages({t.formula, share}, "");
    }
    const bool overhead = t.key == "overhead";
    if (overhead) t = OverheadTerm(w, opt, f);
    terms.push_back(std::move(t));
    if (overhead && !opt.unified_memory && f.host_process_bytes) {
      terms.push_back({"host_process", Msg("host memory: host process"), f.host_process_bytes,
                       Msg("Python, torch, CUDA libraries, tokenizer, data loader (not in the "
                           "device's peak)")});
    }
    if (terms.back().key == "optimizer_step") {
      for (const NodeBuffer& b : n.buffers) terms.push_back({b.key, b.label, b.bytes, b.formula});
    }
  }
  f.terms = std::move(terms);
}

// What every term's formula needs besides the footprint's own figures.
struct Formulas {
  Message weights, optimizer, step;
  uint64_t tokens = 0;
  double param_bytes = 0;
  double grad_bytes = 0;
  uint64_t shard = 0, quant_copy = 0;
};

// The breakdown, in display order.
void Terms(const ModelSpec& s, const Workload& w, const FootprintOptions& opt,
           const ActivationModel& am, Formulas parts, Footprint& f) {
  const double c = DTypeBytes(w.compute_dtype);
  const uint64_t tokens = parts.tokens;
  const Message tok = w.kind == WorkloadKind::kDpo
                          ? Msg("{} tokens ({} x {} x 2 chosen/rejected)", tokens, w.batch, w.seq)
                          : Msg("{} tokens ({} x {})", tokens, w.batch, w.seq);
  f.terms.push_back({"weights", Msg("weights"), f.weights_bytes,
                     f.reference_bytes
                         ? Then(std::move(parts.weights),
                                Msg(" + DPO reference {} x {:g} B", P(f.total_params), c))
                         : std::move(parts.weights)});
  f.terms.push_back({"gradients", Msg("gradients"), f.gradients_bytes,
                     Msg("{} trainable x {:g} B", P(f.trainable_params), parts.grad_bytes)});
  f.terms.push_back({"optimizer", Msg("optimizer ({})", Name(w.optimizer)), f.optimizer_bytes,
                     std::move(parts.optimizer)});
  f.terms.push_back({"optimizer_step", Msg("optimizer step transient"), f.optimizer_step_bytes,
                     std::move(parts.step)});
  Message layer_formula =
      w.grad_ckpt
          ? Msg("checkpointed: {} layers x {:g} B x {} + one layer recomputed ({:.0f} "
                "B/token) beyond the "
                "loss peak",
                s.num_layers, am.checkpoint_bytes_per_token, tok, am.layer_bytes_per_token)
          : Msg("{} layers x {:.0f} B/token x {}", s.num_layers, am.layer_bytes_per_token, tok);
  f.terms.push_back({"layer_activations",
                     w.grad_ckpt && w.offload_checkpoints
                         ? Msg("activations ({}, grad-ckpt offload)", Name(w.attention))
                     : w.grad_ckpt ? Msg("activations ({}, grad-ckpt on)", Name(w.attention))
                                   : Msg("activations ({}, grad-ckpt off)", Name(w.attention)),
                     f.layer_activations_bytes, std::move(layer_formula)});
  f.terms.push_back({"logits", Msg("logits and loss ({})", Name(w.loss)), f.logits_bytes,
                     JoinMessages({am.loss_formula, tok}, " x ")});
  if (f.dequant_bytes) {
    f.terms.push_back({"dequant", Msg("dequantized weight"), f.dequant_bytes,
                       Msg("the largest quantized weight in {}", Name(w.compute_dtype))});
  }
  f.terms.push_back(OverheadTerm(w, opt, f));  // its bytes follow the peak (NodeTerms)
  if (w.kind == WorkloadKind::kGrpo) {
    f.terms.push_back({"rollout", Msg("rollout engine (GRPO)"), f.rollout_bytes,
                       Msg("{:g} x pool {}", w.rollout_fraction, GiB(opt.pool_bytes))});
  }
  if (f.host_offload_bytes) {
    f.terms.push_back({"host_offload", Msg("host memory: offloaded checkpoints"),
                       f.host_offload_bytes,
                       Msg("{} layers x {:g} B x {} (not in the device's peak)", s.num_layers,
                           am.checkpoint_bytes_per_token, tok)});
  }
  Message load_formula = Msg("one shard's pages {}", GiB(parts.shard));
  if (parts.quant_copy) {
    switch (w.quantizer) {
      case Quantizer::kBitsandbytes:
        load_formula = Msg("one shard's pages {} + bf16 copy of the largest weight {}",
                           GiB(parts.shard), GiB(parts.quant_copy));
        break;
      case Quantizer::kTorchao:
        load_formula =
            Msg("one shard's pages {} + torchao NF4 quantization of the largest weight {} (input, "
                "scaled blocks, codes; its difference with the 16 NF4 values in chunks of 1024^2)",
                GiB(parts.shard), GiB(parts.quant_copy));
        break;
      case Quantizer::kTorchaoWholeTensor:
        load_formula =
            Msg("one shard's pages {} + torchao 0.1 NF4 quantization of the largest weight {} (68 "
                "B/element: its difference with the 16 NF4 values, whole)",
                GiB(parts.shard), GiB(parts.quant_copy));
        break;
    }
  }
  f.terms.push_back(
      {"load_transient", Msg("load transient"), f.load_transient_bytes, std::move(load_formula)});
}

}  // namespace

namespace {

// The whole run's terms, as one device holds them, with their breakdown; no peak yet
// (NodeFootprint computes them).
Footprint WholeFootprint(const ModelSpec& s, const Workload& w, const FootprintOptions& opt) {
  Footprint f;
  const double c = DTypeBytes(w.compute_dtype);
  f.total_params = TotalParams(s);
  f.trainable_params = TrainableParams(s, w);
  if (IsLora(w.method) && ExpertsAreFused(s)) {
    f.notes.push_back(
        Msg("the experts are fused parameters, not Linear modules: LoRA targets reach "
            "the attention projections only (PEFT target_parameters would reach "
            "experts; not modelled)"));
  }
  Formulas parts;
  // LoRA adapters, their gradients and states: fp32 (PEFT's autocast_adapter_dtype).
  parts.param_bytes =
      w.method == Method::kFull ? DTypeBytes(w.weight_dtype) : DTypeBytes(DType::kFp32);
  Part weights = Weights(s, w, parts.param_bytes, f);
  parts.weights = std::move(weights.formula);
  // DPO with a full fine-tune needs a frozen reference copy; with LoRA the reference is the
  // base model with the adapter switched off (TRL's default), which costs nothing.
  if (w.kind == WorkloadKind::kDpo && w.method == Method::kFull) {
    f.reference_bytes = Round(static_cast<double>(f.total_params) * c);
  }
  f.weights_bytes = Round(weights.bytes) + f.reference_bytes;
  // Gradients of the trainable parameters, in the parameters' dtype, or in fp32 buffers
  // (Megatron's main_grad).
  parts.grad_bytes = w.fp32_grads ? 4.0 : parts.param_bytes;
  f.gradients_bytes = Round(static_cast<double>(f.trainable_params) * parts.grad_bytes);
  const double state_bytes = w.master_weights ? 4 : parts.param_bytes;
  Part states = OptimizerStates(s, w, f.trainable_params, parts.param_bytes, state_bytes);
  f.optimizer_bytes = Round(states.bytes);
  parts.optimizer = std::move(states.formula);
  Part step = StepTransient(s, w, f.trainable_params, state_bytes);
  f.optimizer_step_bytes = Round(step.bytes);
  parts.step = std::move(step.formula);

  // Activations and the loss. DPO runs chosen and rejected sequences: twice the tokens.
  parts.tokens = static_cast<uint64_t>(w.batch) * static_cast<uint64_t>(w.seq);
  if (w.kind == WorkloadKind::kDpo) parts.tokens *= 2;
  const ActivationModel am = ModelActivations(s, w);
  const ActivationTotals act = TotalActivations(s, w, parts.tokens);
  f.layer_activations_bytes = act.layers_bytes;
  f.logits_bytes = act.loss_bytes;
  if (w.grad_ckpt && w.offload_checkpoints) {
    // Offloaded checkpointing (Unsloth's "unsloth"): every layer's input is copied to the
    // host; on one unified pool the copy is in the same memory, so it is still counted.
    f.offloaded_bytes =
        std::min(f.layer_activations_bytes,
                 Round(static_cast<double>(s.num_layers) * am.checkpoint_bytes_per_token *
                       static_cast<double>(parts.tokens)));
    if (opt.unified_memory) {
      f.notes.push_back(
          Msg("the {} of gradient checkpoints offloaded to the CPU stay in the one unified pool: "
              "counted in the activations (no saving on unified memory)",
              GiB(f.offloaded_bytes)));
    } else {
      f.host_offload_bytes = f.offloaded_bytes;
      f.layer_activations_bytes -= f.offloaded_bytes;
    }
  }
  f.activations_bytes = f.layer_activations_bytes + f.logits_bytes;
  // A 4-bit matmul dequantizes its weight to the compute dtype first (bitsandbytes
  // MatMul4Bit, Unsloth fast_dequantize, torchao NF4): the largest one is alive at the peak.
  if (IsQuantized(w.weight_dtype)) {
    f.dequant_bytes = Round(static_cast<double>(LargestQuantizedParams(s, w)) * c);
  }
  // A full fine-tune's first gradient (lm_head or tied embeddings) appears while the logits
  // are still alive.
  if (w.method == Method::kFull) {
    f.first_grad_bytes = Round(static_cast<double>(EmbeddingParams(s)) * parts.param_bytes);
  }
  if (w.kind == WorkloadKind::kGrpo) {
    f.rollout_bytes = Round(w.rollout_fraction * static_cast<double>(opt.pool_bytes));
  }
  std::tie(parts.shard, parts.quant_copy) = LoadTransient(s, w, f);
  Terms(s, w, opt, am, std::move(parts), f);
  if (!w.grad_ckpt && w.attention == Attention::kEager) {
    f.notes.push_back(
        Msg("eager attention keeps a seq x seq softmax per head and layer; sdpa does not"));
  }
  f.notes.push_back(
      Msg("load peak assumes the loader streams shards onto the device (device_map set); one that "
          "builds the model on the host first peaks near twice the weights"));
  return f;
}

}  // namespace

void NodeFootprint(const ModelSpec& s, const Workload& w, const FootprintOptions& opt,
                   Footprint* f) {
  const NodeShares shares = SharesOfNode(s, w, opt.parallel, *f);
  uint64_t whole_peak = 0;
  if (shares.per_node()) {
    Footprint one = *f;
    NodePeaks(w, opt, NodeShares{}, one);
    whole_peak = one.peak_bytes();
  }
  NodePeaks(w, opt, shares, *f);
  NodeTerms(w, opt, shares, *f);
  if (!shares.per_node()) return;
  for (const Message& note : shares.notes) f->notes.push_back(note);
  ShardingInfo info;
  info.devices = shares.devices;
  info.sharding = shares.sharding;
  info.single_device_peak_bytes = whole_peak;
  info.buffers_bytes = f->backward_peak_bytes >= f->step_peak_bytes
                           ? shares.backward_buffers_bytes()
                           : shares.step_buffers_bytes();
  info.layer_unit_params = shares.layer_unit_params;
  info.root_unit_params = shares.root_unit_params;
  f->sharding = info;
}

Footprint ComputeFootprint(const ModelSpec& s, const Workload& w, const FootprintOptions& opt) {
  // The whole run's terms, then one node's shares of them and every peak (one device: shares
  // of 1).
  const Workload sharded = ShardedWorkload(w, opt.parallel);
  Footprint f = WholeFootprint(s, sharded, opt);
  NodeFootprint(s, sharded, opt, &f);
  if (f.sharding && sharded.master_weights != w.master_weights) {
    // "The same run on one device" is the workload as given (without ZeRO's master copy).
    FootprintOptions one = opt;
    one.parallel = {};
    f.sharding->single_device_peak_bytes = ComputeFootprint(s, w, one).peak_bytes();
  } else if (!f.sharding && opt.parallel.sharding_given) {
    f.notes.push_back(
        Msg("--sharding {} with --devices 1 changes nothing: one device holds the "
            "whole run",
            Name(opt.parallel.sharding)));
  }
  return f;
}

}  // namespace headroom
