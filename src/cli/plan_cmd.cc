// `headroom plan`: flags -> ModelSpec + Workload + Budget -> PlanResult -> table or JSON.
//
// Flag values are taken as strings and parsed by the library's parsers, so every error is
// one line naming the flag and what is wrong (exit 2). Exit status: 0 fits or tight,
// 1 does not fit, 2 usage or input error.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/table.h"
#include "cli/cli.h"
#include "cli/config_defaults.h"
#include "cli/plan_args.h"
#include "model/catalog.h"
#include "model/hf_config.h"
#include "plan/plan.h"
#include "store/journal.h"
#include "sweep/anchors.h"

namespace headroom {
namespace {

std::string Gb(uint64_t b) { return fmt::format("{:.2f}", static_cast<double>(b) / 1e9); }
std::string Gib(uint64_t b) { return fmt::format("{:.2f}", static_cast<double>(b) / static_cast<double>(kGiB)); }

void PrintPlan(const CliEnv& env, const PlanResult& p) {
  const Footprint& f = p.footprint;
  const Workload& w = p.workload;
  std::string how = std::string(Name(w.method));
  if (IsLora(w.method)) {
    std::string targets;
    for (const auto& t : w.lora_targets) targets += (targets.empty() ? "" : ",") + t;
    how += fmt::format(" r{} on {}", w.lora_rank, targets);
  }
  std::fprintf(env.out, "headroom plan: %s (%s parameters, %s trainable; from %s)\n",
               p.spec.name.c_str(), FormatParamCount(f.total_params).c_str(),
               FormatParamCount(f.trainable_params).c_str(), p.model_source.c_str());
  std::fprintf(env.out,
               "  %s, weights %s, %s (%s step)%s, batch %lld x seq %lld, grad-ckpt %s, "
               "%s attention, %s loss, %s\n\n",
               how.c_str(), std::string(Name(w.weight_dtype)).c_str(),
               std::string(Name(w.optimizer)).c_str(), std::string(Name(w.optimizer_step)).c_str(),
               w.master_weights ? " + fp32 master" : "", static_cast<long long>(w.batch),
               static_cast<long long>(w.seq), w.grad_ckpt ? "on" : "off",
               std::string(Name(w.attention)).c_str(), std::string(Name(w.loss)).c_str(),
               std::string(Name(w.kind)).c_str());

  using A = TextTable::Align;
  TextTable t({A::kLeft, A::kRight, A::kRight, A::kLeft});
  t.AddRow({"term", "GB", "GiB", "formula"});
  t.AddRule();
  for (const auto& term : f.terms) {
    if (term.key == "load_transient") continue;
    t.AddRow({term.label, Gb(term.bytes), Gib(term.bytes), term.formula});
  }
  t.AddRule();
  t.AddRow({"tensor peak", Gb(f.tensor_peak_bytes), Gib(f.tensor_peak_bytes),
            f.backward_peak_bytes >= f.step_peak_bytes ? "at the start of backward"
                                                       : "during the optimizer step"});
  t.AddRow({"steady peak", Gb(f.steady_peak_bytes), Gib(f.steady_peak_bytes),
            "tensor peak + overhead" + std::string(f.rollout_bytes ? " + rollout" : "")});
  const FootprintTerm* load = nullptr;
  for (const auto& term : f.terms) {
    if (term.key == "load_transient") load = &term;
  }
  t.AddRow({"load peak", Gb(f.load_peak_bytes), Gib(f.load_peak_bytes),
            "weights + " + (load ? load->formula : std::string()) + " + context + host"});
  std::fputs(t.Render().c_str(), env.out);

  const Budget& b = p.budget;
  std::fprintf(env.out, "\nbudget (%s):\n", b.source.c_str());
  TextTable bt({A::kLeft, A::kRight, A::kRight, A::kLeft});
  auto opt_row = [&](const char* name, const std::optional<uint64_t>& v, const std::string& note) {
    if (v) bt.AddRow({name, Gb(*v), Gib(*v), note});
  };
  bt.AddRow({"", "GB", "GiB", ""});
  opt_row("MemTotal", b.mem_total_bytes, "");
  opt_row("MemAvailable", b.mem_available_bytes,
          b.available_source == "MemAvailable" ? "" : b.available_source);
  opt_row("page cache (reclaimable)", b.reclaimable_cache_bytes,
          "counted in MemAvailable; nvidia-smi/cudaMemGetInfo would call it used");
  if (b.source != "--budget") bt.AddRow({"reserve", Gb(b.reserve_bytes), Gib(b.reserve_bytes), "--reserve"});
  bt.AddRow({"budget", Gb(b.budget_bytes), Gib(b.budget_bytes), ""});
  std::fputs(bt.Render().c_str(), env.out);

  const uint64_t peak = f.peak_bytes();
  const double share = b.budget_bytes ? 100.0 * static_cast<double>(peak) / static_cast<double>(b.budget_bytes) : 0;
  std::fprintf(env.out, "\nverdict: %s: peak %s (the %s peak) is %s of the %s budget\n",
               std::string(Name(p.verdict)).c_str(), FormatBoth(peak).c_str(),
               f.load_peak_bytes > f.steady_peak_bytes ? "load" : "steady",
               b.budget_bytes ? fmt::format("{:.0f} %", share).c_str() : "all",
               FormatGB(b.budget_bytes).c_str());
  if (p.anchor.anchor) {
    const Anchor& a = *p.anchor.anchor;
    if (a.reported_bytes) {
      std::fprintf(env.out,
                   "anchor: \"%s\" (%s, %s, seq %lld): this planner estimates that setup at %s, "
                   "%.2fx the reported figure; this plan is %.2fx it\n",
                   a.statement.c_str(), a.model.c_str(), std::string(Name(a.method)).c_str(),
                   static_cast<long long>(a.seq), FormatGB(p.anchor.anchor_estimate_bytes).c_str(),
                   p.anchor.ratio, p.anchor.plan_ratio);
    } else {
      std::fprintf(env.out,
                   "anchor: \"%s\" (%s, %s, seq %lld): this planner estimates that setup at %s; "
                   "this plan is %.2fx that estimate\n",
                   a.statement.c_str(), a.model.c_str(), std::string(Name(a.method)).c_str(),
                   static_cast<long long>(a.seq), FormatGB(p.anchor.anchor_estimate_bytes).c_str(),
                   p.anchor.plan_ratio);
    }
  }
  if (!p.advice.empty()) {
    std::fprintf(env.out, "advice, in the OOM ladder's order:\n");
    int i = 1;
    for (const auto& a : p.advice) std::fprintf(env.out, "  %d. %s\n", i++, a.text.c_str());
  }
  for (const auto& n : p.model_notes) std::fprintf(env.out, "note: %s\n", n.c_str());
  for (const auto& n : f.notes) std::fprintf(env.out, "note: %s\n", n.c_str());
  std::fprintf(env.out, "%s\n", kPlanDisclaimer);
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
    if (!a.model.empty() && NormalizeModelName(a.model) != name && NormalizeModelName(a.model) != NormalizeModelName(fl.model)) {
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
    out.push_back({{"run_id", a.run_id}, {"ended_at", a.ended_at},
                   {"model", a.model.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.model)},
                   {"method", a.method.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.method)},
                   {"command", a.command}, {"config", a.config_text},
                   {"batch", a.batch ? nlohmann::json(*a.batch) : nlohmann::json(nullptr)},
                   {"seq", a.seq ? nlohmann::json(*a.seq) : nlohmann::json(nullptr)},
                   {"peak_bytes", a.peak_bytes},
                   {"plan_estimate_bytes", s.estimate_bytes ? nlohmann::json(*s.estimate_bytes) : nlohmann::json(nullptr)}});
  }
  return out;
}

void PrintLocalAnchors(const CliEnv& env, const std::vector<ShownAnchor>& anchors) {
  if (anchors.empty()) return;
  std::fprintf(env.out, "your measured anchors (finished `headroom sweep` runs in the journal):\n");
  for (const auto& s : anchors) {
    const auto& a = s.anchor;
    std::string what = a.model.empty() ? fmt::format("{}", fmt::join(a.command, " ")).substr(0, 60) : a.model;
    if (!a.method.empty()) what += " " + a.method;
    std::string line = fmt::format("  run {}: {}: {}: peak {} above the baseline", a.run_id, what, a.config_text,
                                   FormatGB(a.peak_bytes));
    if (s.estimate_bytes && a.peak_bytes) {
      line += fmt::format("; this planner estimates {} for it ({:.2f}x)", FormatGB(*s.estimate_bytes),
                          static_cast<double>(*s.estimate_bytes) / static_cast<double>(a.peak_bytes));
    }
    std::fprintf(env.out, "%s\n", line.c_str());
  }
}

int ListModels(const CliEnv& env, bool json) {
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const ModelSpec& m : Catalog()) {
      list.push_back({{"name", m.name}, {"family", m.family}, {"params", ArchitectureParams(m)},
                      {"published_params", m.published_params}, {"layers", m.num_layers},
                      {"hidden_size", m.hidden_size}, {"num_experts", m.num_experts},
                      {"num_experts_per_tok", m.experts_per_token}, {"source", m.published_source}});
    }
    std::fprintf(env.out, "%s\n", nlohmann::json{{"schema_version", kPlanSchemaVersion},
                                                 {"models", list}}.dump(2).c_str());
    return kExitOk;
  }
  using A = TextTable::Align;
  TextTable t({A::kLeft, A::kLeft, A::kRight, A::kRight, A::kRight, A::kLeft});
  t.AddRow({"name", "family", "params", "layers", "hidden", "experts"});
  t.AddRule();
  for (const ModelSpec& m : Catalog()) {
    t.AddRow({m.name, m.family, FormatParamCount(ArchitectureParams(m)), std::to_string(m.num_layers),
              std::to_string(m.hidden_size),
              m.num_experts ? fmt::format("{} ({} active)", m.num_experts, m.experts_per_token) : ""});
  }
  std::fputs(t.Render(0).c_str(), env.out);
  return kExitOk;
}

}  // namespace

int RunPlan(const CliEnv& env, const std::vector<std::string>& args) {
  PlanFlags fl;
  CLI::App app{
      "Will this training run fit in the memory pool? Sums weights, gradients, optimizer "
      "states, activations, logits, framework overhead and the model-load transient, against "
      "MemAvailable from /proc/meminfo (never nvidia-smi).\n\n"
      "exit status: 0 fits or tight, 1 does not fit, 2 usage or input error",
      "headroom plan"};
  AddPlanInputFlags(app, fl);
  app.add_flag("--json", fl.json, "print the plan as JSON (schema in docs/plan-json.md)");
  app.add_flag("--list-models", fl.list_models, "list the catalog and exit");
  app.add_option("--journal", fl.journal, "read measured anchors (finished sweeps) from this journal (default: $HEADROOM_JOURNAL, else $XDG_STATE_HOME/headroom/journal.db)");

  if (auto status = ParseFlags(app, env, "plan", args)) return *status;
  if (fl.list_models) return ListModels(env, fl.json);

  try {
    const PlanInputs in = ResolvePlanInputs(fl, env);
    const ModelSpec& spec = in.spec;
    const Workload& workload = in.workload;
    PlanResult plan = MakePlan(spec, workload, in.budget, in.options);
    plan.model_source = in.model_source;
    plan.model_notes = in.model_notes;
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
