// `headroom plan`: flags -> ModelSpec + Workload + Budget -> PlanResult -> table or JSON.
//
// Flag values are taken as strings and parsed by the library's parsers, so every error is
// one line naming the flag and what is wrong (exit 2). Exit status: 0 fits or tight,
// 1 does not fit, 2 usage or input error.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/i18n.h"
#include "base/table.h"
#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/message_text.h"
#include "cli/plan_args.h"
#include "model/catalog.h"
#include "model/hf_config.h"
#include "plan/plan.h"
#include "store/journal.h"
#include "sweep/anchors.h"

namespace headroom {
namespace {

std::string Gb(uint64_t b) { return fmt::format("{:.2f}", static_cast<double>(b) / 1e9); }
std::string Gib(uint64_t b) {
  return fmt::format("{:.2f}", static_cast<double>(b) / static_cast<double>(kGiB));
}

void PrintPlan(const CliEnv& env, const PlanResult& p) {
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
  std::fprintf(env.out, "  %s\n\n",
               TrFormat("{0}, weights {1}, {2} ({3} step){4}, batch {5} x seq {6}, grad-ckpt {7}, "
                        "{8} attention, {9} loss, {10}",
                        how, Name(w.weight_dtype), Name(w.optimizer), Name(w.optimizer_step),
                        // TRANSLATORS: appended to the optimizer in the workload line.
                        w.master_weights ? Tr(" + fp32 master") : "", w.batch, w.seq,
                        w.grad_ckpt ? "on" : "off", Name(w.attention), Name(w.loss), Name(w.kind))
                   .c_str());

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
  t.AddRow({Tr("load peak"), Gb(f.load_peak_bytes), Gib(f.load_peak_bytes),
            // TRANSLATORS: {} is the load transient's formula, from the plan's terms.
            TrFormat("weights + {} + context + host",
                     load ? TranslatedText(load->formula) : std::string())});
  std::fputs(t.Render().c_str(), env.out);

  const Budget& b = p.budget;
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
  if (b.source != "--budget")
    bt.AddRow({Tr("reserve"), Gb(b.reserve_bytes), Gib(b.reserve_bytes), "--reserve"});
  bt.AddRow({Tr("budget"), Gb(b.budget_bytes), Gib(b.budget_bytes), ""});
  std::fputs(bt.Render().c_str(), env.out);

  const uint64_t peak = f.peak_bytes();
  const double share =
      b.budget_bytes ? 100.0 * static_cast<double>(peak) / static_cast<double>(b.budget_bytes) : 0;
  // TRANSLATORS: replaces the percentage in the verdict line when the budget is zero.
  const std::string share_text =
      b.budget_bytes ? fmt::format("{:.0f} %", share) : std::string(Tr("all"));
  // TRANSLATORS: "verdict: fits: peak 45.2 GB (42.1 GiB) (the load peak) is 40 % of the 112.6 GB
  // budget"; {0} is the verdict (fits, tight, does not fit).
  std::fprintf(env.out, "\n%s\n",
               (f.load_peak_bytes > f.steady_peak_bytes
                    ? TrFormat("verdict: {0}: peak {1} (the load peak) is {2} of the {3} budget",
                               TranslatedText(VerdictWord(p.verdict)), FormatBoth(peak), share_text,
                               FormatGB(b.budget_bytes))
                    : TrFormat("verdict: {0}: peak {1} (the steady peak) is {2} of the {3} budget",
                               TranslatedText(VerdictWord(p.verdict)), FormatBoth(peak), share_text,
                               FormatGB(b.budget_bytes)))
                   .c_str());
  if (p.anchor.anchor) {
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
  }
  if (!p.advice.empty()) {
    std::fprintf(env.out, "%s\n", Tr("advice, in the OOM ladder's order:"));
    int i = 1;
    for (const auto& a : p.advice)
      std::fprintf(env.out, "  %d. %s\n", i++, TranslatedText(a.text).c_str());
  }
  for (const auto& n : p.model_notes)
    std::fprintf(env.out, "%s\n", TrFormat("note: {}", n).c_str());
  for (const auto& n : f.notes)
    std::fprintf(env.out, "%s\n", TrFormat("note: {}", TranslatedText(n)).c_str());
  // The disclaimer is also the JSON's "disclaimer" (English); marked where it is defined.
  std::fprintf(env.out, "%s\n", Tr(kPlanDisclaimer));
}

// The answers of finished sweeps for this model (or unlabelled ones), with this planner's
// estimate of the same setup where the method matches. A journal that does not exist or
// cannot be read means no measured anchors, never an error of plan's.
struct ShownAnchor {
  MeasuredAnchor anchor;
  std::optional<uint64_t> estimate_bytes;
};

constexpr size_t kMaxLocalAnchors = 5;

std::vector<ShownAnchor> LocalAnchors(const CliEnv& env, const PlanFlags& fl, const ModelSpec& spec,
                                      const Workload& workload) {
  auto path = JournalPath(env, fl.journal);
  if (!path || !std::filesystem::exists(*path)) return {};
  auto journal = Journal::Open(*path, JournalOptions{.read_only = true});
  if (!journal) return {};
  auto anchors = ReadMeasuredAnchors(*journal);
  if (!anchors) return {};
  std::vector<ShownAnchor> out;
  const std::string name = NormalizeModelName(spec.name);
  for (auto& a : *anchors) {
    if (!a.model.empty() && NormalizeModelName(a.model) != name &&
        NormalizeModelName(a.model) != NormalizeModelName(fl.model)) {
      continue;
    }
    ShownAnchor shown{a, std::nullopt};
    if (!a.model.empty() && !a.method.empty() && a.method == std::string(Name(workload.method))) {
      Workload w = workload;
      if (a.batch) w.batch = *a.batch;
      if (a.seq) w.seq = *a.seq;
      shown.estimate_bytes = ComputeFootprint(spec, w).peak_bytes();
    }
    out.push_back(std::move(shown));
    if (out.size() == kMaxLocalAnchors) break;
  }
  return out;
}

nlohmann::json LocalAnchorsJson(const std::vector<ShownAnchor>& anchors) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : anchors) {
    const auto& a = s.anchor;
    out.push_back(
        {{"run_id", a.run_id},
         {"ended_at", a.ended_at},
         {"model", a.model.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.model)},
         {"method", a.method.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.method)},
         {"command", a.command},
         {"config", a.config_text},
         {"batch", a.batch ? nlohmann::json(*a.batch) : nlohmann::json(nullptr)},
         {"seq", a.seq ? nlohmann::json(*a.seq) : nlohmann::json(nullptr)},
         {"peak_bytes", a.peak_bytes},
         {"plan_estimate_bytes",
          s.estimate_bytes ? nlohmann::json(*s.estimate_bytes) : nlohmann::json(nullptr)}});
  }
  return out;
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
  }
}

int ListModels(const CliEnv& env, bool json) {
  if (json) {
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
    std::fprintf(
        env.out, "%s\n",
        nlohmann::json{{"schema_version", kPlanSchemaVersion}, {"models", list}}.dump(2).c_str());
    return kExitOk;
  }
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
  return kExitOk;
}

// plan's flags: the app, then the variables its options write.
struct PlanCommandFlags final : CommandFlags {
  CLI::App app{
      Tr("Will this training run fit in the memory pool? Sums weights, gradients, optimizer "
         "states, activations, logits, framework overhead and the model-load transient, against "
         "MemAvailable from /proc/meminfo (never nvidia-smi).\n\n"
         "exit status: 0 fits or tight, 1 does not fit, 2 usage or input error"),
      "headroom plan"};
  PlanFlags fl;
  CLI::App& App() override { return app; }
};

}  // namespace

std::unique_ptr<CommandFlags> DefinePlanFlags() {
  auto defined = std::make_unique<PlanCommandFlags>();
  auto& [app, fl] = *defined;
  AddPlanInputFlags(app, fl);
  AddJsonFlag(app, fl.json);
  app.add_flag("--list-models", fl.list_models, Tr("list the catalog and exit"));
  AddJournalFlag(app, fl.journal);
  return defined;
}

int RunPlan(const CliEnv& env, CommandFlags& given_flags) {
  auto& [app, fl] = FlagsOf<PlanCommandFlags>(given_flags);
  if (fl.list_models) return ListModels(env, fl.json);

  try {
    const PlanInputs in = ResolvePlanInputs(fl, env);
    const ModelSpec& spec = in.spec;
    const Workload& workload = in.workload;
    PlanResult plan = MakePlan(spec, workload, in.budget, in.options);
    plan.model_source = in.model_source;
    for (const auto& note : in.model_notes) plan.model_notes.push_back(TranslatedText(note));
    const auto local = LocalAnchors(env, fl, spec, workload);
    if (fl.json) {
      auto j = PlanToJson(plan);
      j["measured_anchors"] = LocalAnchorsJson(local);
      std::fprintf(env.out, "%s\n", j.dump(2).c_str());
    } else {
      PrintPlan(env, plan);
      PrintLocalAnchors(env, local);
    }
    return plan.verdict == Verdict::kDoesNotFit ? kExitNegative : kExitOk;
  } catch (const UsageError& e) {
    PrintError(env, "plan: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
