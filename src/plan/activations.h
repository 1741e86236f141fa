// Activation memory: the tensors autograd saves for the backward pass, per token.
//
// The inventory is that of a Hugging Face decoder layer (RMSNorm computed in fp32, q/k/v/o
// projections, repeat_kv before SDPA, SwiGLU or GELU MLP, PEFT LoRA with dropout,
// bitsandbytes 4-bit linears that save their input). docs/plan-formulas.md lists every
// tensor with its size and the reason it is kept.
#pragma once

#include <cstdint>
#include <string>

#include "base/message.h"
#include "model/model_spec.h"
#include "plan/workload.h"

namespace headroom {

// Rounds a byte count computed in double, saturating at 2^60 so that absurd inputs (the CLI
// allows 2^44 tokens) give absurd but exact-enough sums of a dozen terms, never a wrapped
// small number.
uint64_t SaturatingBytes(double v);

struct ActivationModel {
  double layer_bytes_per_token = 0;         // one decoder layer, everything it saves
  double dense_layer_bytes_per_token = 0;   // MoE models' dense layers (== layer for dense)
  double eager_scores_bytes_per_token = 0;  // part of the above: eager softmax (seq-squared)
  double checkpoint_bytes_per_token = 0;    // per layer, kept by gradient checkpointing
  double loss_bytes_per_token = 0;          // logits + loss at their peak, per token
  Message loss_formula;                     // "(2 + 12) B x vocab"
};

// `tokens_per_sample` is the sequence length (the eager score term grows with it).
ActivationModel ModelActivations(const ModelSpec& spec, const Workload& workload);

// Bytes of activations at the start of backward for `tokens` tokens in a batch of
// sequences of length `seq`: saved layers (or checkpoints + one recomputed layer) plus the
// loss peak.
struct ActivationTotals {
  uint64_t layers_bytes = 0;  // saved layer activations (or checkpoints + one layer)
  uint64_t loss_bytes = 0;    // logits and loss
};
ActivationTotals TotalActivations(const ModelSpec& spec, const Workload& workload, uint64_t tokens);

}  // namespace headroom
