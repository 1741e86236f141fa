// Implementation notes: both answers plan the workload again (a few microseconds each) and
// read the footprint's terms by key, so they name exactly the lines plan prints. Terms outside
// the device's peak (host memory on a discrete GPU) and the load transient (the load peak,
// not the steady one) are never "the largest term".
#include "plan/advice_terms.h"

#include <string>
#include <string_view>

#include "base/message.h"
#include "model/model_family.h"

namespace headroom {
namespace {

// Terms in the steady peak of the device (or the one pool).
bool InSteadyPeak(std::string_view key) {
  return key != "load_transient" && key != "host_offload" && key != "host_process";
}

// The largest term of `f` that passes `keep`, or nullptr.
template <typename Keep>
const FootprintTerm* LargestTerm(const Footprint& f, Keep keep) {
  const FootprintTerm* best = nullptr;
  for (const FootprintTerm& t : f.terms) {
    if (!InSteadyPeak(t.key) || !keep(t.key)) continue;
    if (!best || t.bytes > best->bytes) best = &t;
  }
  return best;
}

constexpr std::string_view kSpread = "--devices 2 --sharding fsdp";

}  // namespace

bool TermDependsOnSeq(std::string_view key) {
  return key == "layer_activations" || key == "logits";
}

Advice NoShorterSeqAdvice(const ModelSpec& spec, const Workload& workload,
                          const FootprintOptions& options, uint64_t target_bytes) {
  const Footprint now = ComputeFootprint(spec, workload, options);
  Workload shortest = workload;
  shortest.seq = 1;
  const Footprint at_one = ComputeFootprint(spec, shortest, options);
  uint64_t moved = 0;
  for (const FootprintTerm& t : now.terms) {
    if (TermDependsOnSeq(t.key)) moved += t.bytes;
  }
  Advice a;
  a.step = "seq";
  if (at_one.load_peak_bytes > target_bytes && at_one.load_peak_bytes >= at_one.steady_peak_bytes) {
    a.text =
        Msg("no shorter --seq fits: --seq moves the activations and logits ({0} at --seq {1}), but "
            "the load peak, {2}, is over the {3} target at any --seq (the weights and the load "
            "transient)",
            GB(moved), workload.seq, GB(at_one.load_peak_bytes), GB(target_bytes));
    return a;
  }
  const uint64_t rest = at_one.peak_bytes();
  const FootprintTerm* largest =
      LargestTerm(at_one, [](std::string_view key) { return !TermDependsOnSeq(key); });
  a.text =
      Msg("no shorter --seq fits: --seq moves the activations and logits ({0} at --seq {1}), but "
          "even at --seq 1 the peak is {2}, {3} over the {4} target, in terms --seq does not move; "
          "the largest is {5} ({6})",
          GB(moved), workload.seq, GB(rest), GB(rest > target_bytes ? rest - target_bytes : 0),
          GB(target_bytes), largest ? largest->label : Message::Literal("?"),
          GB(largest ? largest->bytes : 0));
  return a;
}

std::string FlagThatCuts(std::string_view key, const Workload& w) {
  const bool full = w.method == Method::kFull;
  if (key == "weights") {
    if (full || w.method == Method::kLora) return "--method qlora";
    return std::string(kSpread);
  }
  if (key == "gradients") return full ? "--method lora" : std::string(kSpread);
  if (key == "optimizer") {
    if (w.optimizer == Optimizer::kAdamW) return "--optimizer adamw-8bit";
    return full ? "--method lora" : std::string(kSpread);
  }
  if (key == "optimizer_step") {
    return w.optimizer_step == OptimizerStep::kForeach ? "--optimizer-step fused"
                                                       : std::string(kSpread);
  }
  if (key == "layer_activations") return w.grad_ckpt ? "--seq, --batch" : "--grad-ckpt on";
  if (key == "logits") return w.loss == LossKind::kFused ? "--seq, --batch" : "--loss fused";
  if (key == "rollout") return "--rollout-fraction";
  if (key == "dequant") return "--method lora";
  return std::string(kSpread);
}

Advice CutTheLargestTerm(const ModelSpec& spec, const Workload& workload,
                         const FootprintOptions& options) {
  const Footprint f = ComputeFootprint(spec, workload, options);
  const FootprintTerm* largest = LargestTerm(f, [](std::string_view) { return true; });
  Advice a;
  a.step = "model";
  if (!largest) return a;
  const std::string family = ModelFamily(spec);
  const std::string flag = FlagThatCuts(largest->key, workload);
  if (!family.empty() && !SmallerInFamily(spec).empty()) {
    a.text = Msg("no smaller {} model in the catalog fits: the largest term is {} ({}); {} cuts it",
                 family, largest->label, GB(largest->bytes), flag);
  } else {
    a.text =
        Msg("no smaller model of its family in the catalog: the largest term is {} ({}); {} cuts "
            "it",
            largest->label, GB(largest->bytes), flag);
  }
  return a;
}

}  // namespace headroom
