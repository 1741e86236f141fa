// Implementation notes: the numbers come from the planner (plan/verdict.h
// AdviseWithinBudget) so that `ladder` and `plan` never disagree; this file only picks the
// entries of one step and adds what the ladder knows beyond the plan (the QLoRA transient,
// the case where the plan said "fits" and the run still OOMed).
//
// Each function makes its advice once: the lines are message values (base/message.h), so
// the journal stores them and the terminal translates them; the evidence is data.
#include "ladder/ladder_advice.h"

#include <fmt/format.h>

#include "plan/verdict.h"

namespace headroom {
namespace {

nlohmann::json OptionalBytes(const std::optional<uint64_t>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

uint64_t PeakOf(const LadderPlanInput& in, const Workload& w) {
  return ComputeFootprint(in.spec, w, in.options).peak_bytes();
}

nlohmann::json PlanJson(const LadderPlanInput& in, const Workload& w) {
  const uint64_t peak = PeakOf(in, w);
  return {{"model", in.spec.name},
          {"method", std::string(Name(w.method))},
          {"seq", w.seq},
          {"batch", w.batch},
          {"peak_bytes", peak},
          {"budget_bytes", in.budget.budget_bytes},
          {"verdict", std::string(Name(Judge(peak, in.budget)))}};
}

Message PlanLine(const LadderPlanInput& in, const Workload& w) {
  const uint64_t peak = PeakOf(in, w);
  // TRANSLATORS: {0} model, {1} method, {2} batch, {3} seq, {4} peak, {5} budget, {6} plan's
  // verdict.
  return Msg("plan: {0} {1}, batch {2} x seq {3}: peak {4} of a {5} budget ({6})", in.spec.name,
             Name(w.method), w.batch, w.seq, GB(peak), GB(in.budget.budget_bytes),
             VerdictWord(Judge(peak, in.budget)));
}

nlohmann::json AdviceJson(const Advice& a) {
  return {{"step", a.step},
          {"text", EnglishText(a.text)},
          {"value", a.value ? nlohmann::json(*a.value) : nlohmann::json(nullptr)},
          {"method", a.method},
          {"model", a.model},
          {"peak_bytes", a.peak_bytes}};
}

// The planner's advice entries of the kinds in `kinds`, as lines and JSON.
void AddAdvice(const std::vector<Advice>& advice, std::initializer_list<std::string_view> kinds,
               StepAdvice* out) {
  for (const auto& a : advice) {
    bool wanted = false;
    for (auto k : kinds) wanted = wanted || a.step == k;
    if (!wanted) continue;
    out->lines.push_back(a.text);
    out->evidence["advice"].push_back(AdviceJson(a));
  }
}

}  // namespace

StepAdvice FlushAdvice(const MemInfo& info) {
  StepAdvice out;
  const auto cached = info.cached_bytes();
  const auto buffers = info.buffers_bytes();
  const auto frees = info.reclaimable_page_cache_bytes();
  const auto available = info.available_bytes();
  auto gb = [](const std::optional<uint64_t>& v) {
    return v ? MessageArg(GB(*v)) : MessageArg(std::string("?"));
  };
  out.lines.push_back(
      Msg("Cached {}, Buffers {}: a flush would free up to {} (MemAvailable {} now)", gb(cached),
          gb(buffers), gb(frees), gb(available)));
  out.lines.push_back(
      Msg("between runs, as root: {} (or: headroom ladder apply JOB)", kFlushCommand));
  out.evidence = {{"cached_bytes", OptionalBytes(cached)},
                  {"buffers_bytes", OptionalBytes(buffers)},
                  {"reclaimable_bytes", OptionalBytes(frees)},
                  {"mem_available_bytes", OptionalBytes(available)},
                  {"command", kFlushCommand}};
  return out;
}

StepAdvice PlanStepAdvice(int step, const LadderPlanInput& in) {
  StepAdvice out;
  const Workload& w = in.workload;
  out.evidence["plan"] = PlanJson(in, w);
  out.evidence["advice"] = nlohmann::json::array();
  out.lines.push_back(PlanLine(in, w));
  const auto advice = AdviseWithinBudget(in.spec, w, in.budget, in.options);
  if (step == 2) {
    if (Judge(PeakOf(in, w), in.budget) == Verdict::kFits) {
      // The run OOMed where the plan has room: the plan is optimistic for this job (another
      // process, a framework with more slack). The planner's "largest that fits" would be
      // the current value, so halve instead and measure.
      const int64_t half = std::max<int64_t>(1, w.seq / 2);
      out.lines.push_back(
          Msg("the plan says these settings fit, yet the run OOMed: halve "
              "the packing, --seq {}, and measure (headroom sweep)",
              half));
      out.evidence["advice"].push_back(
          {{"step", "seq"}, {"value", half}, {"text", "halve --seq: the plan is optimistic here"}});
      return out;
    }
    AddAdvice(advice, {"seq", "batch"}, &out);
    if (w.seq <= 1 && w.batch <= 1) out.lines.push_back(Msg("packing and batch are already 1"));
    return out;
  }
  if (step == 3) {
    if (w.method == Method::kQlora) {
      // Not "cheaper" to the planner (bf16 weights are larger), but QLoRA's dequantization
      // buffers are transient peaks the steady plan does not hold: a QLoRA OOM does not prove
      // that the model cannot fit, and bf16 LoRA has no such buffers.
      Workload lora = w;
      lora.method = Method::kLora;
      lora.weight_dtype = DefaultWeightDType(Method::kLora);
      out.lines.push_back(
          Msg("QLoRA's dequantization buffers are transient and can OOM before an "
              "equivalent bf16 LoRA run; a QLoRA OOM does not prove the model cannot fit"));
      out.lines.push_back(Msg("switch to bf16 LoRA: {}", PlanLine(in, lora)));
      out.evidence["downgrade"] = PlanJson(in, lora);
      const auto lora_advice = AdviseWithinBudget(in.spec, lora, in.budget, in.options);
      if (Judge(PeakOf(in, lora), in.budget) != Verdict::kFits) {
        AddAdvice(lora_advice, {"seq", "batch"}, &out);
      }
      return out;
    }
    AddAdvice(advice, {"method"}, &out);
    if (out.evidence["advice"].empty()) {
      out.lines.push_back(Msg("no cheaper method than {} is known to the planner", Name(w.method)));
    }
    return out;
  }
  if (step == 4) {
    AddAdvice(advice, {"model"}, &out);
    out.lines.push_back(
        Msg("or a second machine: data parallel (DDP) or sharded (FSDP) across two, "
            "never tensor parallelism"));
    return out;
  }
  return UnplannedStepAdvice(step);
}

StepAdvice UnplannedStepAdvice(int step) {
  StepAdvice out;
  switch (step) {
    case 2:
      out.lines.push_back(
          Msg("shorten the packing length (--seq) first, then the batch; give "
              "--plan-args to `ladder start` for the largest values that fit"));
      break;
    case 3:
      out.lines.push_back(
          Msg("QLoRA to bf16 LoRA: QLoRA's dequantization buffers are transient and "
              "can OOM before an equivalent bf16 LoRA run"));
      break;
    case 4:
      out.lines.push_back(
          Msg("a smaller model, or a second machine (DDP/FSDP, never tensor "
              "parallelism)"));
      break;
    default:
      break;
  }
  out.evidence["planned"] = false;
  return out;
}

}  // namespace headroom
