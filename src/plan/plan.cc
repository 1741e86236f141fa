#include "plan/plan.h"

#include "model/catalog.h"
#include "plan/framework_profile.h"
#include "plan/plan_fields.h"

namespace headroom {
namespace {

template <typename T>
nlohmann::json Opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json ModelJson(const PlanResult& p) {
  const Footprint& f = p.footprint;
  return {
      {"name", p.spec.name},
      {"source", p.model_source},
      {"family", p.spec.family},
      {"total_params", f.total_params},
      {"trainable_params", f.trainable_params},
      {"quantized_params", f.quantized_params},
      {"exact_params_from_safetensors", p.spec.exact_params.has_value()},
      {"architecture",
       {{"hidden_size", p.spec.hidden_size},
        {"num_hidden_layers", p.spec.num_layers},
        {"num_attention_heads", p.spec.num_heads},
        {"num_key_value_heads", p.spec.num_kv_heads},
        {"head_dim", p.spec.head_dim},
        {"intermediate_size", p.spec.intermediate_size},
        {"vocab_size", p.spec.vocab_size},
        {"tie_word_embeddings", p.spec.tie_word_embeddings},
        {"num_experts", p.spec.num_experts},
        {"num_experts_per_tok", p.spec.experts_per_token},
        {"moe_intermediate_size", p.spec.moe_intermediate_size}}},
      {"notes", EnglishTexts(p.model_notes)},
  };
}

nlohmann::json WorkloadJson(const Workload& w) {
  using nlohmann::json;
  return {
      {"method", Name(w.method)},
      {"lora_rank", IsLora(w.method) ? json(w.lora_rank) : json(nullptr)},
      {"lora_targets", IsLora(w.method) ? json(w.lora_targets) : json(nullptr)},
      {"weight_dtype", Name(w.weight_dtype)},
      {"compute_dtype", Name(w.compute_dtype)},
      {"optimizer", Name(w.optimizer)},
      {"optimizer_step", Name(w.optimizer_step)},
      {"master_weights", w.master_weights},
      {"batch", w.batch},
      {"seq", w.seq},
      {"grad_ckpt", w.grad_ckpt},
      {"attention", Name(w.attention)},
      {"loss", Name(w.loss)},
      {"workload", Name(w.kind)},
      {"rollout_fraction", w.rollout_fraction},
      {"framework", Name(w.framework)},
      {"offload_checkpoints", w.offload_checkpoints},
  };
}

// The published measurement closest to the plan (ClosestAnchor, plan/verdict.h), or null.
nlohmann::json AnchorJson(const AnchorMatch& m) {
  using nlohmann::json;
  if (!m.anchor) return nullptr;
  const Anchor& a = *m.anchor;
  return {
      {"id", a.id},
      {"statement", a.statement},
      {"model", a.model},
      {"method", Name(a.method)},
      {"seq", a.seq},
      {"reported_bytes", Opt(a.reported_bytes)},
      {"estimate_bytes", m.anchor_estimate_bytes},
      {"estimate_to_reported_ratio", a.reported_bytes ? json(m.ratio) : json(nullptr)},
      {"plan_to_anchor_ratio", m.plan_ratio},
      {"framework", a.framework_stated ? json(Name(a.framework)) : json(nullptr)},
      {"planned_as", Name(a.framework)},
      {"source", a.source},
  };
}

// --devices / --sharding: whether the figures are one node's share, and of what.
nlohmann::json ParallelJson(const Footprint& f, const Parallelism& given) {
  if (!f.sharding) {
    return {{"devices", given.devices},
            {"sharding",
             given.sharding_given ? nlohmann::json(Name(given.sharding)) : nlohmann::json(nullptr)},
            {"per_node", false}};
  }
  const ShardingInfo& s = *f.sharding;
  return {{"devices", s.devices},
          {"sharding", Name(s.sharding)},
          {"per_node", true},
          {"single_device_peak_bytes", s.single_device_peak_bytes},
          {"buffers_bytes", s.buffers_bytes},
          {"layer_unit_params", s.layer_unit_params},
          {"root_unit_params", s.root_unit_params}};
}

nlohmann::json LevelJson(const PoolLevel& l) {
  return {{"bytes", l.bytes}, {"source", LevelOriginName(l.origin)}, {"where", l.where}};
}

// The levels the verdict is judged against (sys/pool_levels.h), and what the run leaves.
nlohmann::json LevelsJson(const PlanResult& p) {
  const PoolLevels& l = p.budget.levels;
  return {
      {"available_bytes", p.budget.judged_available_bytes},
      {"leftover_bytes", LeftoverBytes(p.budget.judged_available_bytes, p.footprint.peak_bytes())},
      {"warn", LevelJson(l.warn)},
      {"kill", LevelJson(l.kill)},
      {"reserve", LevelJson(l.reserve)},
      {"fit_bytes", l.fit_bytes()},
      {"floor_bytes", l.floor_bytes()},
      {"text", EnglishText(LevelsLine(p.footprint.peak_bytes(), p.budget))}};
}

}  // namespace

PlanResult MakePlan(const ModelSpec& spec, const Workload& workload, const Budget& budget,
                    const FootprintOptions& options) {
  PlanResult p;
  p.spec = spec;
  p.workload = workload;
  p.budget = budget;
  p.options = options;
  p.footprint = ComputeFootprint(spec, workload, options);
  p.verdict = Judge(p.footprint.peak_bytes(), budget);
  p.anchor = ClosestAnchor(spec, workload, p.footprint.peak_bytes(), options);
  if (p.verdict != Verdict::kFits) {
    p.advice = AdviseWithinBudget(spec, workload, budget, options);
  }
  return p;
}

PlanResult MakePlan(const PlanInputs& in) {
  PlanResult p = MakePlan(in.spec, in.workload, in.budget, in.options);
  p.model_source = in.model_source;
  p.model_notes = in.model_notes;
  p.sources = in.sources;
  return p;
}

nlohmann::json PlanToJson(const PlanResult& p) {
  using nlohmann::json;
  // The footprint computed once, by MakePlan: its words are message values, rendered here in
  // English (plan/footprint.h).
  const Footprint& f = p.footprint;
  const Workload& w = p.workload;
  json j;
  j["schema_version"] = kPlanSchemaVersion;
  j["model"] = ModelJson(p);
  j["workload"] = WorkloadJson(w);
  // Where each input came from: flag, file (--from), profile (--framework's) or default.
  if (!p.sources.empty()) j["sources"] = PlanSourcesToJson(p.sources);
  const FrameworkProfile& profile = ProfileOf(w.framework);
  j["framework"] = {
      {"name", profile.name},
      {"stack", profile.stack},
      {"upcast_unquantized", w.upcast_unquantized},
      {"quantize_lm_head", w.quantize_lm_head},
      {"quantize_only_targets", w.quantize_only_targets},
      {"quantizer", Name(w.quantizer)},
      {"fp32_grads", w.fp32_grads},
      {"expandable_segments", w.expandable_segments},
      {"roundup_power2_divisions", w.roundup_power2_divisions},
  };
  j["platform"] = p.options.unified_memory ? "unified" : "discrete";
  j["terms"] = {
      {"weights", f.weights_bytes},
      {"gradients", f.gradients_bytes},
      {"optimizer", f.optimizer_bytes},
      {"activations", f.activations_bytes},
      {"overhead", f.overhead_bytes},
      {"optimizer_step", f.optimizer_step_bytes},
      {"layer_activations", f.layer_activations_bytes},
      {"logits", f.logits_bytes},
      {"reference", f.reference_bytes},
      {"rollout", f.rollout_bytes},
      {"cuda_context", f.cuda_context_bytes},
      {"allocator_slack", f.allocator_slack_bytes},
      {"host_process", f.host_process_bytes},
      {"load_transient", f.load_transient_bytes},
      {"load_quantize", f.load_quantize_bytes},
      {"dequant", f.dequant_bytes},
      {"offloaded", f.offloaded_bytes},
      {"host_offload", f.host_offload_bytes},
  };
  json breakdown = json::array();
  for (const auto& t : f.terms) {
    breakdown.push_back({{"key", t.key},
                         {"label", EnglishText(t.label)},
                         {"bytes", t.bytes},
                         {"formula", EnglishText(t.formula)}});
  }
  j["breakdown"] = breakdown;
  j["tensor_peak_bytes"] = f.tensor_peak_bytes;
  j["backward_peak_bytes"] = f.backward_peak_bytes;
  j["step_peak_bytes"] = f.step_peak_bytes;
  j["steady_peak_bytes"] = f.steady_peak_bytes;
  j["load_peak_bytes"] = f.load_peak_bytes;
  j["host_peak_bytes"] = f.host_peak_bytes;
  j["peak_bytes"] = f.peak_bytes();
  j["parallel"] = ParallelJson(f, p.options.parallel);
  j["budget_bytes"] = p.budget.budget_bytes;
  j["budget"] = {
      {"source", p.budget.source},
      {"mem_total_bytes", Opt(p.budget.mem_total_bytes)},
      {"mem_available_bytes", Opt(p.budget.mem_available_bytes)},
      {"mem_available_source", p.budget.available_source},
      {"reclaimable_page_cache_bytes", Opt(p.budget.reclaimable_cache_bytes)},
      {"cached_bytes", Opt(p.budget.cached_bytes)},
      {"reserve_bytes", p.budget.reserve_bytes},
  };
  j["verdict"] = VerdictKey(p.verdict);
  j["levels"] = LevelsJson(p);
  j["anchor"] = AnchorJson(p.anchor);
  json advice = json::array();
  for (const auto& a : p.advice) {
    json item = {{"step", a.step},
                 {"text", EnglishText(a.text)},
                 {"peak_bytes", a.peak_bytes},
                 {"verdict", VerdictKey(a.verdict)}};
    item["value"] = Opt(a.value);
    if (!a.method.empty()) item["method"] = a.method;
    if (!a.model.empty()) item["model"] = a.model;
    if (!a.sharding.empty()) item["sharding"] = a.sharding;
    advice.push_back(item);
  }
  j["advice"] = advice;
  json notes = json::array();
  for (const auto& n : f.notes) notes.push_back(EnglishText(n));
  j["notes"] = notes;
  j["disclaimer"] = kPlanDisclaimer;
  return j;
}

nlohmann::json CatalogToJson() {
  nlohmann::json list = nlohmann::json::array();
  for (const ModelSpec& m : Catalog()) {
    list.push_back({{"name", m.name},
                    {"family", m.family},
                    {"params", ArchitectureParams(m)},
                    {"published_params", m.published_params},
                    {"layers", m.num_layers},
                    {"hidden_size", m.hidden_size},
                    {"num_experts", m.num_experts},
                    {"num_experts_per_tok", m.experts_per_token},
                    {"source", m.published_source}});
  }
  return {{"schema_version", kPlanSchemaVersion}, {"models", list}};
}

}  // namespace headroom
