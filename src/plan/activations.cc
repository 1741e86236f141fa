// Implementation notes. Sizes are bytes per token; c is the compute dtype's size (2 for
// bf16). A tensor counts once even when two operations save it (PyTorch saves references,
// not copies), and only when some later gradient needs it: autograd saves the input of a
// linear layer only when the weight's gradient is wanted (full fine-tune) or when the
// layer's own backward needs it (bitsandbytes 4-bit MatMul4Bit saves its input A for the
// dequantize-and-matmul backward); a frozen torch Linear saves nothing.
//
// Per decoder layer (Hugging Face Llama/Qwen/Mistral/Gemma code paths):
//   RMSNorm x2       4h each: the fp32 upcast that pow() and mul() save; full fine-tune
//                    adds c*h for the normalised tensor the norm weight's gradient needs.
//                    LayerNorm models (GPT-NeoX, Phi-1.5, Falcon) save c*h instead.
//   norm outputs     c*h each when one of their consumers needs its input (see above).
//   LoRA dropout     (c + 1)*in per targeted linear (output + bool mask), plus c*r for A's
//                    output; with dropout 0 the linear's input is saved instead.
//   SDPA, flash      q, k, v after repeat_kv (each heads*head_dim) and the output: 4*c*q_dim,
//                    plus the fp32 log-sum-exp (4*heads): what FlashAttention's backward
//                    needs, whether through SDPA's flash backend or flash-attn itself.
//   eager attention  q, k, v as above, plus the softmax: fp32 output (4*heads*seq) and its
//                    compute-dtype copy used by the matmul with v (c*heads*seq).
//   o_proj input     c*q_dim when o needs its input.
//   gated MLP        gate and up outputs and silu(gate): 3*c*w; the product c*w when down
//                    needs its input. GELU MLP: up output c*w, gelu output c*w if needed.
//   MoE              w is the active width (experts_per_token x moe width + shared); the
//                    dispatched token copies (c*h per active expert) when experts need
//                    their input, the expert outputs weighted by the router (c*h each), and
//                    fp32 router probabilities (4*experts).
// Loss (per token, vocabulary V): standard Hugging Face path keeps the compute-dtype
// logits (c*V), upcasts them to fp32 (4V), shifts a contiguous copy (4V) and saves the
// log-softmax (4V): (c + 12)*V at the peak. torchtune's chunked loss keeps the bf16 chunks
// and each chunk's fp32 log-softmax: (c + 4)*V plus one chunk's transient (V/2 with 8
// chunks). A fused loss (Liger, Unsloth, Cut Cross Entropy) materialises one chunk: c*V/8.
#include "plan/activations.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace headroom {
namespace {

bool Targets(const Workload& w, std::string_view linear) {
  return IsLora(w.method) &&
         std::find(w.lora_targets.begin(), w.lora_targets.end(), linear) != w.lora_targets.end();
}

// Whether backward needs the input of this linear layer.
bool NeedsInput(const Workload& w, std::string_view linear) {
  if (w.method == Method::kFull) return true;
  // bitsandbytes 4-bit (and NVFP4 LoRA kernels) save the input for their own backward.
  if (w.method == Method::kQlora || w.method == Method::kNvfp4Lora) return true;
  // LoRA without dropout: A's input is the linear's input.
  return Targets(w, linear) && w.lora_dropout <= 0;
}

double NormBytes(const ModelSpec& s, const Workload& w, double c) {
  const double h = static_cast<double>(s.hidden_size);
  if (s.layer_norm_bias) return c * h;  // native LayerNorm saves its input (+ mean, rstd)
  return 4 * h + (w.method == Method::kFull ? c * h : 0);
}

double LoraBytes(const Workload& w, std::string_view linear, double in, double c) {
  if (!Targets(w, linear)) return 0;
  const double dropout = w.lora_dropout > 0 ? (c + 1) * in : 0;
  return dropout + c * static_cast<double>(w.lora_rank);
}

double LayerBytes(const ModelSpec& s, const Workload& w, double c, bool dense_layer,
                  double* eager_part) {
  const double h = static_cast<double>(s.hidden_size);
  const double q_dim = static_cast<double>(s.num_heads * s.head_dim);
  const double heads = static_cast<double>(s.num_heads);
  const double seq = static_cast<double>(w.seq);
  const bool moe = s.num_experts > 0 && !dense_layer;
  double bytes = 0;

  // Attention block: its norm, the norm output, LoRA on q/k/v, the attention core, o.
  bytes += NormBytes(s, w, c);
  if (NeedsInput(w, "q") || NeedsInput(w, "k") || NeedsInput(w, "v")) bytes += c * h;
  for (const char* l : {"q", "k", "v"}) bytes += LoraBytes(w, l, h, c);
  if (w.attention != Attention::kEager) {  // sdpa and flash save the same tensors
    bytes += 4 * c * q_dim + 4 * heads;
  } else {
    const double scores = (4 + c) * heads * seq;
    bytes += 3 * c * q_dim + scores;
    if (eager_part) *eager_part = scores;
  }
  if (NeedsInput(w, "o")) bytes += c * q_dim;
  bytes += LoraBytes(w, "o", q_dim, c);

  // MLP block. Parallel-attention models (one norm per layer) share the first norm.
  if (s.norms_per_layer >= 2) bytes += NormBytes(s, w, c);
  if (NeedsInput(w, "gate") || NeedsInput(w, "up")) bytes += c * h;
  const double width = moe ? static_cast<double>(s.experts_per_token + s.num_shared_experts) *
                                 static_cast<double>(s.moe_intermediate_size)
                           : static_cast<double>(s.intermediate_size);
  const double copies = moe ? static_cast<double>(s.experts_per_token + s.num_shared_experts) : 1;
  const bool lora_on_mlp = !(moe && ExpertsAreFused(s));
  for (const char* l : {"gate", "up"}) {
    if ((l == std::string_view("gate") && s.mlp != MlpKind::kGated) || !lora_on_mlp) continue;
    bytes += copies * LoraBytes(w, l, h, c);
  }
  bytes += (s.mlp == MlpKind::kGated ? 3 : 1) * c * width;
  if (NeedsInput(w, "down")) bytes += c * width;
  if (lora_on_mlp) bytes += copies * LoraBytes(w, "down", width / copies, c);
  if (moe) {
    const double k = static_cast<double>(s.experts_per_token);
    if (NeedsInput(w, "gate") || NeedsInput(w, "up")) bytes += c * h * k;
    bytes += c * h * k + 4 * static_cast<double>(s.num_experts);
  }
  // Gemma 2/3: two more norms (post-attention and post-feed-forward) on the residual path.
  if (s.norms_per_layer > 2) bytes += (s.norms_per_layer - 2) * NormBytes(s, w, c);
  return bytes;
}

}  // namespace

ActivationModel ModelActivations(const ModelSpec& s, const Workload& w) {
  ActivationModel m;
  const double c = DTypeBytes(w.compute_dtype);
  m.layer_bytes_per_token = LayerBytes(s, w, c, false, &m.eager_scores_bytes_per_token);
  m.dense_layer_bytes_per_token = LayerBytes(s, w, c, true, nullptr);
  // A 4-bit load whose other parameters were upcast to fp32 (PEFT's
  // prepare_model_for_kbit_training) embeds in fp32, and the residual stream, each layer's
  // input, stays fp32 (fp32 + bf16 is fp32): the checkpoints are 4 B per element.
  const bool four_bit = w.weight_dtype == DType::kNf4 || w.weight_dtype == DType::kInt4 ||
                        w.weight_dtype == DType::kNvfp4 || w.weight_dtype == DType::kFp8 ||
                        w.weight_dtype == DType::kInt8;
  const double residual = w.upcast_unquantized && four_bit ? 4.0 : c;
  m.checkpoint_bytes_per_token = residual * static_cast<double>(s.hidden_size);
  const double v = static_cast<double>(s.vocab_size);
  switch (w.loss) {
    case LossKind::kStandard:
      m.loss_bytes_per_token = (c + 12) * v;
      m.loss_formula = Msg("({:g} + 12) B x vocab {}", c, s.vocab_size);
      break;
    case LossKind::kChunked:
      m.loss_bytes_per_token = (c + 4.5) * v;
      m.loss_formula = Msg("({:g} + 4.5) B x vocab {}", c, s.vocab_size);
      break;
    case LossKind::kFused:
      m.loss_bytes_per_token = c * v / 8;
      m.loss_formula = Msg("{:g} B x vocab {} / 8 chunks", c, s.vocab_size);
      break;
  }
  return m;
}

uint64_t SaturatingBytes(double v) {
  if (!(v > 0)) return 0;
  if (v >= 0x1p60) return uint64_t{1} << 60;
  return static_cast<uint64_t>(std::llround(v));
}

ActivationTotals TotalActivations(const ModelSpec& s, const Workload& w, uint64_t tokens) {
  const ActivationModel m = ModelActivations(s, w);
  const double t = static_cast<double>(tokens);
  const double dense_layers = s.num_experts > 0 ? static_cast<double>(s.num_dense_layers) : 0;
  const double moe_layers = static_cast<double>(s.num_layers) - dense_layers;
  ActivationTotals out;
  out.loss_bytes = SaturatingBytes(m.loss_bytes_per_token * t);
  double layers = 0;
  if (w.grad_ckpt) {
    // Checkpoints of every layer's input, plus one layer recomputed during its backward.
    // The recompute happens after the loss's backward has freed the logits, so the peak
    // is the larger of the two, not their sum.
    const double recompute = std::max(m.layer_bytes_per_token, m.dense_layer_bytes_per_token) * t;
    const double loss = m.loss_bytes_per_token * t;
    layers = static_cast<double>(s.num_layers) * m.checkpoint_bytes_per_token * t +
             std::max(0.0, recompute - loss);
  } else {
    layers =
        (moe_layers * m.layer_bytes_per_token + dense_layers * m.dense_layer_bytes_per_token) * t;
  }
  out.layers_bytes = SaturatingBytes(layers);
  return out;
}

}  // namespace headroom
