#include "cli/plan_view.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <optional>
#include <string>

#include "base/bytes.h"
#include "base/table.h"
#include "base/text.h"
#include "cli/cli.h"
#include "cli/i18n.h"
#include "cli/levels_text.h"
#include "cli/message_text.h"
#include "model/catalog.h"
#include "plan/framework_profile.h"

namespace headroom {
namespace {

std::string Gb(uint64_t b) { return fmt::format("{:.2f}", static_cast<double>(b) / 1e9); }
std::string Gib(uint64_t b) {
  return fmt::format("{:.2f}", static_cast<double>(b) / static_cast<double>(kGiB));
}

// --devices N: the figures below are one node's share; says so above the table.
void PrintPerNode(const CliEnv& env, const Footprint& f) {
  if (!f.sharding) return;
  const ShardingInfo& s = *f.sharding;
  // TRANSLATORS: above plan's table with --devices: {0} devices, {1} the sharding (ddp, fsdp,
  // zero2, zero3: values of --sharding), {2} the same run's peak on one device.
  std::fprintf(env.out, "%s\n\n",
               TrFormat("per node ({0} devices, {1}): every figure below is one node's share, "
                        "against each node's budget; the same run on one device peaks {2}",
                        s.devices, Name(s.sharding), FormatGB(s.single_device_peak_bytes))
                   .c_str());
}

void PrintHeader(const CliEnv& env, const PlanResult& p) {
  const Footprint& f = p.footprint;
  const Workload& w = p.workload;
  std::string how = std::string(Name(w.method));
  if (IsLora(w.method)) {
    std::string targets;
    for (const auto& t : w.lora_targets) targets += (targets.empty() ? "" : ",") + t;
    // TRANSLATORS: "lora r16 on all-linear": the method, the LoRA rank, the target modules.
    how = TrFormat("{0} r{1} on {2}", how, w.lora_rank, targets);
  }
  std::fprintf(env.out, "%s\n",
               TrFormat("headroom plan: {} ({} parameters, {} trainable; from {})", p.spec.name,
                        FormatParamCount(f.total_params), FormatParamCount(f.trainable_params),
                        p.model_source)
                   .c_str());
  // TRANSLATORS: the workload line under the plan's title. {4} is empty or " + fp32 master";
  // {7} is on or off (the values of --grad-ckpt); the other values are names of flags' values.
  std::fprintf(env.out, "  %s\n",
               TrFormat("{0}, weights {1}, {2} ({3} step){4}, batch {5} x seq {6}, grad-ckpt {7}, "
                        "{8} attention, {9} loss, {10}",
                        how, Name(w.weight_dtype), Name(w.optimizer), Name(w.optimizer_step),
                        // TRANSLATORS: appended to the optimizer in the workload line.
                        w.master_weights ? Tr(" + fp32 master") : "", w.batch, w.seq,
                        w.grad_ckpt ? (w.offload_checkpoints ? "offload" : "on") : "off",
                        Name(w.attention), Name(w.loss), Name(w.kind))
                   .c_str());
  // TRANSLATORS: {0} is a --framework name (hf, unsloth, ...), {1} what that stack is, in
  // English; {2} is unified or discrete (the values of --platform).
  std::fprintf(env.out, "  %s\n\n",
               TrFormat("framework {0} ({1}): its defaults fill the flags not given; platform {2}",
                        Name(w.framework), ProfileOf(w.framework).stack,
                        p.options.unified_memory ? "unified" : "discrete")
                   .c_str());
  PrintPerNode(env, f);
}

void PrintTerms(const CliEnv& env, const Footprint& f) {
  using A = TextTable::Align;
  TextTable t({A::kLeft, A::kRight, A::kRight, A::kLeft});
  // TRANSLATORS: headings of plan's table: a footprint term, its size, the formula behind it.
  t.AddRow({Tr("term"), "GB", "GiB", Tr("formula")});
  t.AddRule();
  for (const auto& term : f.terms) {
    if (term.key == "load_transient") continue;
    t.AddRow({TranslatedText(term.label), Gb(term.bytes), Gib(term.bytes),
              TranslatedText(term.formula)});
  }
  t.AddRule();
  t.AddRow({Tr("tensor peak"), Gb(f.tensor_peak_bytes), Gib(f.tensor_peak_bytes),
            f.backward_peak_bytes >= f.step_peak_bytes ? Tr("at the start of backward")
                                                       : Tr("during the optimizer step")});
  t.AddRow(
      {Tr("steady peak"), Gb(f.steady_peak_bytes), Gib(f.steady_peak_bytes),
       f.rollout_bytes ? Tr("tensor peak + overhead + rollout") : Tr("tensor peak + overhead")});
  const FootprintTerm* load = nullptr;
  for (const auto& term : f.terms) {
    if (term.key == "load_transient") load = &term;
  }
  const std::string load_formula = load ? TranslatedText(load->formula) : std::string();
  t.AddRow({Tr("load peak"), Gb(f.load_peak_bytes), Gib(f.load_peak_bytes),
            // TRANSLATORS: {} is the load transient's formula, from the plan's terms.
            f.host_peak_bytes ? TrFormat("weights + {} + context", load_formula)
                              : TrFormat("weights + {} + context + host", load_formula)});
  if (f.host_peak_bytes) {
    // A discrete GPU: the host's share, outside the device's peaks.
    t.AddRow({Tr("host memory"), Gb(f.host_peak_bytes), Gib(f.host_peak_bytes),
              Tr("host process + offloaded checkpoints, outside the device's peaks")});
  }
  std::fputs(t.Render().c_str(), env.out);
}

void PrintBudget(const CliEnv& env, const Budget& b, const PlanPoolView& view) {
  using A = TextTable::Align;
  if (view.target && view.target->unified && b.mem_total_bytes && b.mem_available_bytes) {
    // TRANSLATORS: plan --target gb10: a DGX Spark's figures, {0} MemTotal and {1} the
    // MemAvailable of an idle Spark, from headroom's platform profile.
    std::fprintf(env.out, "\n%s\n",
                 TrFormat("target gb10: MemTotal {0}, idle MemAvailable {1} (platform profile, not "
                          "measured here)",
                          FormatBoth(*b.mem_total_bytes), FormatBoth(*b.mem_available_bytes))
                     .c_str());
  }
  // TRANSLATORS: {} is where the budget came from: a path such as /proc/meminfo, or --budget.
  std::fprintf(env.out, "\n%s\n", TrFormat("budget ({}):", b.source).c_str());
  TextTable bt({A::kLeft, A::kRight, A::kRight, A::kLeft});
  auto opt_row = [&](const char* name, const std::optional<uint64_t>& v, const std::string& note) {
    if (v) bt.AddRow({name, Gb(*v), Gib(*v), note});
  };
  bt.AddRow({"", "GB", "GiB", ""});
  opt_row("MemTotal", b.mem_total_bytes, "");
  opt_row("MemAvailable", b.mem_available_bytes,
          b.available_source == "MemAvailable" ? "" : b.available_source);
  opt_row(Tr("page cache (reclaimable)"), b.reclaimable_cache_bytes,
          Tr("counted in MemAvailable; nvidia-smi/cudaMemGetInfo would call it used"));
  if (b.source != "--budget") {
    // The levels the verdict is judged against (docs/config.md "The levels").
    auto level_row = [&](const std::string& name, const PoolLevel& l) {
      bt.AddRow({name, Gb(l.bytes), Gib(l.bytes), LevelSourceText(l)});
    };
    level_row(Tr("reserve"), b.levels.reserve);
    level_row(Tr("kill level"), b.levels.kill);
    level_row(Tr("warning level"), b.levels.warn);
  }
  bt.AddRow({Tr("budget"), Gb(b.budget_bytes), Gib(b.budget_bytes), ""});
  std::fputs(bt.Render().c_str(), env.out);
}

// One pool's line under a discrete plan's verdict.
void PrintPoolLine(const CliEnv& env, const PoolJudgement& pool) {
  // TRANSLATORS: the two pools of a discrete GPU: its own memory and the host's.
  const std::string name = pool.pool == "device" ? Tr("device") : Tr("host");
  if (!pool.verdict) {
    // TRANSLATORS: a pool whose size is not known: {0} the pool (device, host), {1} what the
    // plan needs in it.
    std::fprintf(env.out, "  %s\n",
                 (pool.pool == "device"
                      ? TrFormat("{0}: not judged: needs {1}; no device memory is known (no NVML "
                                 "device reports its own): give --target discrete:SIZE or a card "
                                 "name",
                                 name, FormatBoth(pool.need_bytes))
                      : TrFormat("{0}: not judged: needs {1}; the target's host memory is not "
                                 "known here (give --budget SIZE for it)",
                                 name, FormatBoth(pool.need_bytes)))
                     .c_str());
    return;
  }
  const double share = pool.budget_bytes ? 100.0 * static_cast<double>(pool.need_bytes) /
                                               static_cast<double>(pool.budget_bytes)
                                         : 0;
  // TRANSLATORS: one pool's verdict: {0} the pool (device, host), {1} the verdict (fits,
  // tight, does not fit), {2} what the plan needs there, {3} its share of {4}, the budget, and
  // {5} where the budget came from (English).
  std::fprintf(env.out, "  %s\n",
               TrFormat("{0}: {1}: {2} is {3} of {4} ({5})", name,
                        TranslatedText(VerdictWord(*pool.verdict)), FormatBoth(pool.need_bytes),
                        pool.budget_bytes ? fmt::format("{:.0f} %", share) : std::string(Tr("all")),
                        FormatGB(pool.budget_bytes), pool.source)
                   .c_str());
}

void PrintVerdictLine(const CliEnv& env, const PlanResult& p) {
  const Footprint& f = p.footprint;
  const Budget& b = p.budget;
  const uint64_t peak = f.peak_bytes();
  const double share =
      b.budget_bytes ? 100.0 * static_cast<double>(peak) / static_cast<double>(b.budget_bytes) : 0;
  // TRANSLATORS: replaces the percentage in the verdict line when the budget is zero.
  const std::string share_text =
      b.budget_bytes ? fmt::format("{:.0f} %", share) : std::string(Tr("all"));
  // TRANSLATORS: "verdict: fits: peak 45.2 GB (42.1 GiB) (the load peak) is 40 % of the 112.6 GB
  // budget"; {0} is the verdict (fits, tight, does not fit).
  if (f.sharding) {
    // TRANSLATORS: the verdict with --devices: {0} the verdict, {1} the peak, {2} and {3} the
    // devices and the sharding (a value of --sharding), {4} the share, {5} one node's budget.
    std::fprintf(
        env.out, "\n%s\n",
        TrFormat("verdict: {0}: peak {1} per node ({2} devices, {3}) is {4} of each "
                 "node's {5} budget",
                 TranslatedText(VerdictWord(p.verdict)), FormatBoth(peak), f.sharding->devices,
                 Name(f.sharding->sharding), share_text, FormatGB(b.budget_bytes))
            .c_str());
    return;
  }
  std::fprintf(env.out, "\n%s\n",
               (f.load_peak_bytes > f.steady_peak_bytes
                    ? TrFormat("verdict: {0}: peak {1} (the load peak) is {2} of the {3} budget",
                               TranslatedText(VerdictWord(p.verdict)), FormatBoth(peak), share_text,
                               FormatGB(b.budget_bytes))
                    : TrFormat("verdict: {0}: peak {1} (the steady peak) is {2} of the {3} budget",
                               TranslatedText(VerdictWord(p.verdict)), FormatBoth(peak), share_text,
                               FormatGB(b.budget_bytes)))
                   .c_str());
}

// The verdict, then what it means against the guard's levels (plan/verdict.h LevelsLine); on a
// discrete GPU the worse of its pools' verdicts, then one line per pool.
void PrintVerdict(const CliEnv& env, const PlanResult& p, const PlanPoolView& view) {
  if (!p.options.unified_memory && !view.pools.empty()) {
    // TRANSLATORS: a discrete GPU's verdict, the worse of its pools' (the lines below it).
    std::fprintf(env.out, "\n%s\n",
                 TrFormat("verdict: {0} (the worse of the device's and the host's)",
                          TranslatedText(VerdictWord(p.verdict)))
                     .c_str());
    for (const PoolJudgement& pool : view.pools) PrintPoolLine(env, pool);
    return;
  }
  PrintVerdictLine(env, p);
  const Message levels = LevelsLine(p.footprint.peak_bytes(), p.budget);
  if (levels.empty()) return;
  // TRANSLATORS: {0} the verdict, {1} what it means against the guard's levels.
  std::fprintf(
      env.out, "%s\n",
      TrFormat("{0}: {1}", TranslatedText(VerdictWord(p.verdict)), TranslatedText(levels)).c_str());
}

void PrintAnchor(const CliEnv& env, const PlanResult& p) {
  if (!p.anchor.anchor) {
    // TRANSLATORS: no published measurement is of the same method and of a model within {0}
    // times this one's parameter count (ClosestAnchor).
    std::fprintf(env.out, "%s\n",
                 TrFormat("anchor: no reported run close to this one (the same method, a model "
                          "within {0:g}x the parameters)",
                          kAnchorParamFactor)
                     .c_str());
    return;
  }
  {
    const Anchor& a = *p.anchor.anchor;
    // TRANSLATORS: an anchor is a published measurement of a similar setup; {0} quotes it
    // (its translation), {1} is the model, {2} the method, {3} the sequence length.
    if (a.reported_bytes) {
      std::fprintf(
          env.out, "%s\n",
          TrFormat("anchor: \"{0}\" ({1}, {2}, seq {3}): this planner estimates that setup at {4}, "
                   "{5:.2f}x the reported figure; this plan is {6:.2f}x it",
                   TrText(a.statement), a.model, Name(a.method), a.seq,
                   FormatGB(p.anchor.anchor_estimate_bytes), p.anchor.ratio, p.anchor.plan_ratio)
              .c_str());
    } else {
      std::fprintf(
          env.out, "%s\n",
          TrFormat("anchor: \"{0}\" ({1}, {2}, seq {3}): this planner estimates that setup at {4}; "
                   "this plan is {5:.2f}x that estimate",
                   TrText(a.statement), a.model, Name(a.method), a.seq,
                   FormatGB(p.anchor.anchor_estimate_bytes), p.anchor.plan_ratio)
              .c_str());
    }
    // Like with like: the anchor's own setup is planned with the stack it was measured with.
    const std::string anchor_stack(Name(a.framework));
    const std::string plan_stack(Name(p.workload.framework));
    std::string line;
    if (!a.framework_stated) {
      // TRANSLATORS: {0} is a --framework name.
      line = TrFormat("the anchor's stack is not stated: planned as {0}", anchor_stack);
    } else if (a.framework == p.workload.framework) {
      // TRANSLATORS: {0} is a --framework name.
      line = TrFormat("the anchor was measured with {0}, the stack of this plan", anchor_stack);
    } else {
      // TRANSLATORS: {0} and {1} are --framework names.
      line = TrFormat(
          "the anchor was measured with {0} and planned with its profile; this plan is for {1} "
          "(--framework {0} plans the same stack)",
          anchor_stack, plan_stack);
    }
    std::fprintf(env.out, "  %s\n", line.c_str());
  }
}

void PrintAdviceAndNotes(const CliEnv& env, const PlanResult& p) {
  if (!p.advice.empty()) {
    std::fprintf(env.out, "%s\n", Tr("advice, in the OOM ladder's order:"));
    int i = 1;
    for (const auto& a : p.advice)
      std::fprintf(env.out, "  %d. %s\n", i++, TranslatedText(a.text).c_str());
  }
  for (const auto& n : p.model_notes)
    std::fprintf(env.out, "%s\n", TrFormat("note: {}", TranslatedText(n)).c_str());
  for (const auto& n : p.footprint.notes)
    std::fprintf(env.out, "%s\n", TrFormat("note: {}", TranslatedText(n)).c_str());
  // The disclaimer is also the JSON's "disclaimer" (English); marked where it is defined.
  std::fprintf(env.out, "%s\n", Tr(kPlanDisclaimer));
}

}  // namespace

void PrintRunConfig(const CliEnv& env, const RunConfig& config, const std::string& file) {
  std::string origin;
  if (config.model_origin == "catalog") origin = Tr("catalog");
  if (config.model_origin == "local folder") origin = Tr("local folder");
  if (config.model_origin == "hf cache") origin = Tr("Hugging Face cache");
  std::fprintf(env.out, "%s\n",
               origin.empty()
                   ? TrFormat("from {} ({})", EscapeControls(file), Name(config.format)).c_str()
                   : TrFormat("from {} ({}): base model {} ({})", EscapeControls(file),
                              Name(config.format), EscapeControls(config.base_model), origin)
                         .c_str());
  if (!config.not_modelled.empty()) {
    std::string keys;
    for (const auto& k : config.not_modelled)
      keys += (keys.empty() ? "" : ", ") + EscapeControls(k);
    std::fprintf(env.out, "%s\n", TrFormat("not modelled: {}", keys).c_str());
  }
  std::fprintf(env.out, "\n");
}

void PrintPlan(const CliEnv& env, const PlanResult& p, const PlanPoolView& view) {
  PrintHeader(env, p);
  PrintTerms(env, p.footprint);
  PrintBudget(env, p.budget, view);
  PrintVerdict(env, p, view);
  PrintAnchor(env, p);
  PrintAdviceAndNotes(env, p);
}

void PrintLocalAnchors(const CliEnv& env, const std::vector<ShownAnchor>& anchors) {
  if (anchors.empty()) return;
  std::fprintf(env.out, "%s\n",
               Tr("your measured anchors (finished `headroom sweep` runs in the journal):"));
  for (const auto& s : anchors) {
    const auto& a = s.anchor;
    std::string what =
        a.model.empty() ? fmt::format("{}", fmt::join(a.command, " ")).substr(0, 60) : a.model;
    if (!a.method.empty()) what += " " + a.method;
    // TRANSLATORS: one finished sweep: its run id, the model and method (or its command), the
    // chosen configuration (e.g. "batch=8 seq=2048") and its measured peak.
    const std::string line =
        s.estimate_bytes && a.peak_bytes
            ? TrFormat(
                  "run {0}: {1}: {2}: peak {3} above the baseline; this planner estimates {4} for "
                  "it ({5:.2f}x)",
                  a.run_id, what, a.config_text, FormatGB(a.peak_bytes),
                  FormatGB(*s.estimate_bytes),
                  static_cast<double>(*s.estimate_bytes) / static_cast<double>(a.peak_bytes))
            : TrFormat("run {0}: {1}: {2}: peak {3} above the baseline", a.run_id, what,
                       a.config_text, FormatGB(a.peak_bytes));
    std::fprintf(env.out, "  %s\n", line.c_str());
    // A sweep started from plan --solve (sweep --start plan): how far the plan was.
    const auto measured = a.plan_knob == "batch" ? a.batch
                          : a.plan_knob == "seq" ? a.seq
                                                 : std::nullopt;
    if (a.plan_value && measured) {
      // TRANSLATORS: {0} a knob (batch, seq), {1} the sweep's answer, {2} plan --solve's value.
      std::fprintf(env.out, "    %s\n",
                   TrFormat("sweep measured {0} {1} where plan said {2} (gap {3:+})", a.plan_knob,
                            *measured, *a.plan_value, *measured - *a.plan_value)
                       .c_str());
    }
  }
  for (const auto& s : anchors) {
    if (!s.estimate_bytes) continue;
    // TRANSLATORS: {0} is a --framework name.
    std::fprintf(env.out, "  %s\n",
                 TrFormat("(estimates planned with the {0} profile: the journal does not record "
                          "the stack a sweep ran)",
                          Name(s.framework))
                     .c_str());
    break;
  }
}

void PrintCatalog(const CliEnv& env) {
  using A = TextTable::Align;
  TextTable t({A::kLeft, A::kLeft, A::kRight, A::kRight, A::kRight, A::kLeft});
  // TRANSLATORS: headings of --list-models: parameter count, decoder layers, hidden size, MoE
  // experts.
  t.AddRow({Tr("name"), Tr("family"), Tr("params"), Tr("layers"), Tr("hidden"), Tr("experts")});
  t.AddRule();
  for (const ModelSpec& m : Catalog()) {
    t.AddRow({m.name, m.family, FormatParamCount(ArchitectureParams(m)),
              std::to_string(m.num_layers), std::to_string(m.hidden_size),
              m.num_experts ? TrFormat("{} ({} active)", m.num_experts, m.experts_per_token) : ""});
  }
  std::fputs(t.Render(0).c_str(), env.out);
}

}  // namespace headroom
