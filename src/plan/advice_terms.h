// Advice in the footprint's own terms, for the two steps of AdviseWithinBudget (plan/verdict.h)
// that can find nothing to propose: no shorter --seq fits, and no smaller model of the family
// fits. Each says what is over and what would move it, instead of a general sentence.
//
// --seq moves the layer activations and the logits (both per token: batch x seq); the
// weights, gradients, optimizer states and step, the dequantized weight and the load peak do
// not depend on it (docs/plan-formulas.md). Training keeps no KV cache; a GRPO rollout's
// share is a fraction of the pool, not of --seq.
#pragma once

#include <cstdint>
#include <string>

#include "model/model_spec.h"
#include "plan/footprint.h"
#include "plan/verdict.h"
#include "plan/workload.h"

namespace headroom {

// Whether a footprint term (FootprintTerm::key) grows with --seq.
bool TermDependsOnSeq(std::string_view key);

// The "seq" advice when not even --seq 1 brings the peak to `target_bytes`: the seq-dependent
// terms at the workload's --seq, the peak left at --seq 1 and the largest term of it (or
// the load peak, when that is what stays over).
Advice NoShorterSeqAdvice(const ModelSpec& spec, const Workload& workload,
                          const FootprintOptions& options, uint64_t target_bytes);

// The flag that cuts a term of this workload's footprint: "--loss fused" for the logits of a
// standard loss, "--optimizer adamw-8bit" for 32-bit AdamW states, ...; for a term no
// setting of this run shrinks, "--devices 2 --sharding fsdp".
std::string FlagThatCuts(std::string_view key, const Workload& workload);

// The "model" advice when no smaller model of the family (model/model_family.h) fits, or it
// has none: the footprint's largest term and the flag that cuts it.
Advice CutTheLargestTerm(const ModelSpec& spec, const Workload& workload,
                         const FootprintOptions& options);

}  // namespace headroom
