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
#include "model/catalog.h"
#include "model/hf_config.h"
#include "plan/plan.h"
#include "store/journal.h"
#include "sweep/anchors.h"

namespace headroom {
namespace {

struct PlanFlags {
  std::string model;
  std::string journal;
  std::string config;
  std::string params;
  std::string hidden, layers, heads, kv_heads, intermediate, vocab, experts, active_experts;
  std::string method = "lora";
  std::string lora_rank;
  std::string lora_targets;
  std::string lora_dropout;
  std::string weight_dtype;
  std::string optimizer = "adamw";
  std::string optimizer_step = "foreach";
  bool master_weights = false;
  std::string batch = "1";
  std::string seq = "2048";
  std::string grad_ckpt = "on";
  std::string attention = "sdpa";
  std::string loss = "standard";
  std::string workload = "sft";
  std::string rollout_fraction;
  std::string double_quant = "on";
  std::string reserve;
  std::string budget;
  std::string overhead;
  std::string root;
  bool json = false;
  bool list_models = false;
};

template <typename T>
T Need(Result<T> r, std::string_view flag) {
  if (!r) throw UsageError{fmt::format("{}: {}", flag, r.error().message)};
  return std::move(r).value();
}

bool OnOff(const std::string& v, std::string_view flag) {
  if (v == "on" || v == "true" || v == "yes" || v == "1") return true;
  if (v == "off" || v == "false" || v == "no" || v == "0") return false;
  throw UsageError{fmt::format("{}: '{}' is not on or off", flag, v)};
}

double Fraction(const std::string& v, std::string_view flag, double lo, double hi) {
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size() || !std::isfinite(d) || d < lo || d >= hi) {
    throw UsageError{fmt::format("{}: '{}' is not a number in [{:g}, {:g})", flag, v, lo, hi)};
  }
  return d;
}

// --params with optional shape flags. Shape fields not given are borrowed from the
// catalog's dense model nearest in size, which is said in the plan's notes.
ModelSpec SpecFromParams(const PlanFlags& fl, std::vector<std::string>* notes) {
  const uint64_t params = Need(ParseParamCount(fl.params), "--params");
  const ModelSpec* nearest = nullptr;
  for (const ModelSpec& m : Catalog()) {
    if (m.num_experts > 0) continue;
    const double d = std::fabs(std::log(static_cast<double>(TotalParams(m)) / static_cast<double>(params)));
    if (!nearest || d < std::fabs(std::log(static_cast<double>(TotalParams(*nearest)) /
                                           static_cast<double>(params)))) {
      nearest = &m;
    }
  }
  ModelSpec s = nearest ? *nearest : ModelSpec{};
  s.name = fmt::format("custom {}", FormatParamCount(params));
  s.family = "custom";
  s.published_params = 0;
  s.published_source.clear();
  bool borrowed = false;
  auto set = [&](const std::string& text, std::string_view flag, int64_t* field) {
    if (text.empty()) {
      borrowed = true;
      return;
    }
    *field = Need(ParsePositiveInt(text), flag);
  };
  set(fl.hidden, "--hidden", &s.hidden_size);
  set(fl.layers, "--layers", &s.num_layers);
  set(fl.heads, "--heads", &s.num_heads);
  if (!fl.heads.empty() || !fl.hidden.empty()) s.head_dim = 0;  // recompute from the shape
  if (fl.kv_heads.empty() && !fl.heads.empty()) s.num_kv_heads = 0;
  set(fl.kv_heads, "--kv-heads", &s.num_kv_heads);
  set(fl.intermediate, "--intermediate", &s.intermediate_size);
  set(fl.vocab, "--vocab", &s.vocab_size);
  if (!fl.experts.empty()) {
    s.num_experts = Need(ParsePositiveInt(fl.experts), "--experts");
    s.moe_intermediate_size = 0;
    s.experts_per_token = fl.active_experts.empty()
                              ? std::min<int64_t>(2, s.num_experts)
                              : Need(ParsePositiveInt(fl.active_experts), "--active-experts");
  } else if (!fl.active_experts.empty()) {
    throw UsageError{"--active-experts: needs --experts"};
  }
  s.extra_params = 0;
  s.exact_params = params;  // the count the user gave wins over the shape's
  if (std::string err = CompleteAndValidate(&s); !err.empty()) {
    throw UsageError{fmt::format("--params: the architecture is not valid: {}", err)};
  }
  if (borrowed && nearest) {
    notes->push_back(fmt::format(
        "architecture fields not given were taken from {} (the catalog's nearest dense model); "
        "give --hidden --layers --heads --kv-heads --intermediate --vocab for exact activations",
        nearest->name));
  }
  return s;
}

ModelSpec ResolveModel(const PlanFlags& fl, std::string* source, std::vector<std::string>* notes) {
  const int given = !fl.model.empty() + !fl.config.empty() + !fl.params.empty();
  if (given == 0) {
    throw UsageError{"no model: give a catalog name, --config PATH or --params N "
                     "(headroom plan --list-models lists the catalog)"};
  }
  if (given > 1) {
    throw UsageError{"conflicting flags: give only one of a catalog name, --config and --params"};
  }
  const bool shape_flags = !fl.hidden.empty() || !fl.layers.empty() || !fl.heads.empty() ||
                           !fl.kv_heads.empty() || !fl.intermediate.empty() ||
                           !fl.vocab.empty() || !fl.experts.empty() || !fl.active_experts.empty();
  if (shape_flags && fl.params.empty()) {
    throw UsageError{"conflicting flags: --hidden, --layers, --heads, --kv-heads, "
                     "--intermediate, --vocab, --experts and --active-experts go with --params"};
  }
  if (!fl.model.empty()) {
    *source = "catalog";
    if (const ModelSpec* m = FindModel(fl.model)) return *m;
    std::string names;
    for (const auto& n : ClosestModelNames(fl.model, 3)) names += (names.empty() ? "" : ", ") + n;
    throw UsageError{fmt::format("unknown model '{}' (closest: {}; see --list-models, or use "
                                 "--config or --params)",
                                 fl.model, names)};
  }
  if (!fl.config.empty()) {
    *source = "config";
    auto spec = ReadModelPath(fl.config);
    if (!spec) throw UsageError{fmt::format("--config: {}", spec.error().message)};
    if (spec->exact_params) {
      notes->push_back(fmt::format("exact parameter count {} read from safetensors headers",
                                   *spec->exact_params));
    }
    return std::move(spec).value();
  }
  *source = "params";
  return SpecFromParams(fl, notes);
}

Workload BuildWorkload(const PlanFlags& fl) {
  Workload w;
  w.method = Need(ParseMethod(fl.method), "--method");
  if (!IsLora(w.method) && (!fl.lora_rank.empty() || !fl.lora_targets.empty() ||
                            !fl.lora_dropout.empty())) {
    throw UsageError{"conflicting flags: --lora-rank, --lora-targets and --lora-dropout need a "
                     "LoRA method (lora, qlora, nvfp4-lora), not --method full"};
  }
  if (!fl.lora_rank.empty()) w.lora_rank = Need(ParsePositiveInt(fl.lora_rank), "--lora-rank");
  if (!fl.lora_targets.empty()) w.lora_targets = Need(ParseLoraTargets(fl.lora_targets), "--lora-targets");
  if (!fl.lora_dropout.empty()) w.lora_dropout = Fraction(fl.lora_dropout, "--lora-dropout", 0, 1);
  w.weight_dtype = fl.weight_dtype.empty() ? DefaultWeightDType(w.method)
                                           : Need(ParseDType(fl.weight_dtype), "--weight-dtype");
  const DType d = w.weight_dtype;
  const bool four_bit = d == DType::kNf4 || d == DType::kInt4 || d == DType::kNvfp4;
  const bool eight_bit = d == DType::kFp8 || d == DType::kInt8;
  if (w.method == Method::kFull && (four_bit || eight_bit)) {
    throw UsageError{fmt::format("conflicting flags: --method full trains every weight, which "
                                 "cannot be stored as {}; use --method qlora or a 16/32-bit dtype",
                                 Name(d))};
  }
  if (w.method == Method::kQlora && !four_bit && !eight_bit) {
    throw UsageError{fmt::format("conflicting flags: --method qlora quantizes the base weights; "
                                 "--weight-dtype {} is plain LoRA (use --method lora)", Name(d))};
  }
  if (w.method == Method::kNvfp4Lora && d != DType::kNvfp4) {
    throw UsageError{"conflicting flags: --method nvfp4-lora needs --weight-dtype nvfp4"};
  }
  if (w.method == Method::kLora && (four_bit || eight_bit)) {
    throw UsageError{fmt::format("conflicting flags: --weight-dtype {} quantizes the base "
                                 "weights: use --method qlora", Name(d))};
  }
  if (d == DType::kFp32) w.compute_dtype = DType::kFp32;
  w.double_quant = OnOff(fl.double_quant, "--double-quant");
  w.optimizer = Need(ParseOptimizer(fl.optimizer), "--optimizer");
  w.optimizer_step = Need(ParseOptimizerStep(fl.optimizer_step), "--optimizer-step");
  w.master_weights = fl.master_weights;
  w.batch = Need(ParsePositiveInt(fl.batch), "--batch");
  w.seq = Need(ParsePositiveInt(fl.seq), "--seq");
  // 2^24 tokens per sample and 2^20 samples per batch are far past any real run and keep
  // the products inside 64-bit arithmetic.
  if (w.seq > (1 << 24)) throw UsageError{fmt::format("--seq: {} is absurdly large", w.seq)};
  if (w.batch > (1 << 20)) throw UsageError{fmt::format("--batch: {} is absurdly large", w.batch)};
  w.grad_ckpt = OnOff(fl.grad_ckpt, "--grad-ckpt");
  w.attention = Need(ParseAttention(fl.attention), "--attention");
  w.loss = Need(ParseLossKind(fl.loss), "--loss");
  w.kind = Need(ParseWorkloadKind(fl.workload), "--workload");
  if (!fl.rollout_fraction.empty()) {
    if (w.kind != WorkloadKind::kGrpo) {
      throw UsageError{"conflicting flags: --rollout-fraction goes with --workload grpo"};
    }
    w.rollout_fraction = Fraction(fl.rollout_fraction, "--rollout-fraction", 0, 1);
  }
  return w;
}

Budget BuildBudget(const PlanFlags& fl, const CliEnv& env) {
  const SysRoot root(fl.root.empty() ? env.default_root : std::filesystem::path(fl.root));
  if (!fl.budget.empty()) {
    if (!fl.reserve.empty()) {
      throw UsageError{"conflicting flags: --reserve applies to MemAvailable; --budget is "
                       "already the whole budget"};
    }
    const uint64_t size = Need(ParseBytes(fl.budget), "--budget");
    auto info = ReadMemInfo(root);
    return BudgetFromSize(size, info ? std::optional<MemInfo>(*info) : std::nullopt);
  }
  const uint64_t reserve = fl.reserve.empty() ? kDefaultReserveBytes
                                              : Need(ParseBytes(fl.reserve, true), "--reserve");
  auto info = ReadMemInfo(root);
  if (!info) throw UsageError{info.error().message + " (or give --budget SIZE)"};
  if (!info->EstimatedAvailable()) {
    throw UsageError{fmt::format("{}: no MemAvailable and no MemFree to estimate it from "
                                 "(give --budget SIZE)",
                                 root.Path("proc/meminfo").string())};
  }
  return BudgetFromMemInfo(*info, reserve, root.Path("proc/meminfo").string());
}

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

std::vector<ShownAnchor> LocalAnchors(const PlanFlags& fl, const ModelSpec& spec, const Workload& workload) {
  auto path = ResolveJournalPath(fl.journal, std::getenv);
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
  app.add_option("model", fl.model, "catalog name, e.g. llama-3.1-70b (see --list-models)");
  app.add_option("--config", fl.config, "a Hugging Face config.json, or a model folder holding one (safetensors headers are read for the exact count)");
  app.add_option("--params", fl.params, "parameter count: 70B, 1.5e9, 350M");
  app.add_option("--hidden", fl.hidden, "with --params: hidden size");
  app.add_option("--layers", fl.layers, "with --params: decoder layers");
  app.add_option("--heads", fl.heads, "with --params: attention heads");
  app.add_option("--kv-heads", fl.kv_heads, "with --params: key/value heads");
  app.add_option("--intermediate", fl.intermediate, "with --params: MLP width");
  app.add_option("--vocab", fl.vocab, "with --params: vocabulary size");
  app.add_option("--experts", fl.experts, "with --params: MoE experts");
  app.add_option("--active-experts", fl.active_experts, "with --params: experts per token");
  app.add_option("--method", fl.method, "full|lora|qlora|nvfp4-lora (default lora)");
  app.add_option("--lora-rank", fl.lora_rank, "LoRA rank (default 16)");
  app.add_option("--lora-targets", fl.lora_targets, "all-linear|attn|q,k,v,o,gate,up,down (default all-linear)");
  app.add_option("--lora-dropout", fl.lora_dropout, "LoRA dropout (default 0.05; 0 saves its tensors)");
  app.add_option("--weight-dtype", fl.weight_dtype, "fp32|bf16|fp16|fp8|int8|nf4|int4|nvfp4 (default from the method)");
  app.add_option("--double-quant", fl.double_quant, "on|off: NF4 double quantization (default on)");
  app.add_option("--optimizer", fl.optimizer, "adamw|adamw-8bit|sgd|adafactor (default adamw)");
  app.add_option("--optimizer-step", fl.optimizer_step, "foreach|fused|loop: how PyTorch runs the step (default foreach)");
  app.add_flag("--master-weights", fl.master_weights, "keep an fp32 master copy (fp32 optimizer states)");
  app.add_option("--batch", fl.batch, "micro-batch size (default 1)");
  app.add_option("--seq", fl.seq, "sequence or packing length in tokens (default 2048)");
  app.add_option("--grad-ckpt", fl.grad_ckpt, "on|off: gradient checkpointing (default on)");
  app.add_option("--attention", fl.attention, "sdpa|eager (default sdpa)");
  app.add_option("--loss", fl.loss, "standard|chunked|fused: how the loss meets the logits (default standard)");
  app.add_option("--workload", fl.workload, "sft|dpo|grpo (default sft)");
  app.add_option("--rollout-fraction", fl.rollout_fraction, "GRPO: share of the pool the inference engine reserves, as vLLM's gpu-memory-utilization");
  app.add_option("--reserve", fl.reserve, "kept back for the OS and driver (default 4GiB)");
  app.add_option("--budget", fl.budget, "use this budget instead of MemAvailable - reserve");
  app.add_option("--overhead", fl.overhead, "replace the framework overhead estimate (CUDA context, allocator slack, host process)");
  app.add_option("--root", fl.root, "read proc/ below this directory instead of / (fixture trees)");
  app.add_flag("--json", fl.json, "print the plan as JSON (schema in docs/plan-json.md)");
  app.add_flag("--list-models", fl.list_models, "list the catalog and exit");
  app.add_option("--journal", fl.journal, "read measured anchors (finished sweeps) from this journal (default: $HEADROOM_JOURNAL, else $XDG_STATE_HOME/headroom/journal.db)");

  if (auto status = ParseFlags(app, env, "plan", args)) return *status;
  if (fl.list_models) return ListModels(env, fl.json);

  try {
    PlanResult plan;
    const ModelSpec spec = ResolveModel(fl, &plan.model_source, &plan.model_notes);
    const Workload workload = BuildWorkload(fl);
    const Budget budget = BuildBudget(fl, env);
    FootprintOptions options;
    options.pool_bytes = budget.pool_bytes();
    if (!fl.overhead.empty()) options.overhead_bytes = Need(ParseBytes(fl.overhead, true), "--overhead");
    const std::string source = plan.model_source;
    const std::vector<std::string> notes = plan.model_notes;
    plan = MakePlan(spec, workload, budget, options);
    plan.model_source = source;
    plan.model_notes = notes;
    const auto local = LocalAnchors(fl, spec, workload);
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
