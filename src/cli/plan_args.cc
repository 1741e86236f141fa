// Parsing of plan's input flags, moved out of plan_cmd.cc unchanged so that `ladder` can
// plan its steps from the same flags (--plan-args).
#include "cli/plan_args.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/i18n.h"
#include "cli/cli11_i18n.h"
#include "cli/common_flags.h"
#include "cli/message_text.h"
#include "model/catalog.h"
#include "model/hf_config.h"
#include "sys/meminfo.h"
#include "sys/sysroot.h"

namespace headroom {
namespace {

template <typename T>
T Need(Result<T> r, std::string_view flag) {
  if (!r) throw UsageError{fmt::format("{}: {}", flag, r.error().message)};
  return std::move(r).value();
}

bool OnOff(const std::string& v, std::string_view flag) {
  if (v == "on" || v == "true" || v == "yes" || v == "1") return true;
  if (v == "off" || v == "false" || v == "no" || v == "0") return false;
  throw UsageError{TrFormat("{}: '{}' is not on or off", flag, v)};
}

double Fraction(const std::string& v, std::string_view flag, double lo, double hi) {
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size() || !std::isfinite(d) || d < lo || d >= hi) {
    throw UsageError{TrFormat("{}: '{}' is not a number in [{:g}, {:g})", flag, v, lo, hi)};
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
    const double d =
        std::fabs(std::log(static_cast<double>(TotalParams(m)) / static_cast<double>(params)));
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
    throw UsageError{Tr("--active-experts: needs --experts")};
  }
  s.extra_params = 0;
  s.exact_params = params;  // the count the user gave wins over the shape's
  if (const Message err = CompleteAndValidate(&s); !err.empty()) {
    throw UsageError{TrFormat("--params: the architecture is not valid: {}", TranslatedText(err))};
  }
  if (borrowed && nearest) {
    notes->push_back(TrFormat(
        "architecture fields not given were taken from {} (the catalog's nearest dense model); "
        "give --hidden --layers --heads --kv-heads --intermediate --vocab for exact activations",
        nearest->name));
  }
  return s;
}

ModelSpec ResolveModel(const PlanFlags& fl, std::string* source, std::vector<std::string>* notes) {
  const int given = !fl.model.empty() + !fl.config.empty() + !fl.params.empty();
  if (given == 0) {
    throw UsageError{
        Tr("no model: give a catalog name, --config PATH or --params N "
           "(headroom plan --list-models lists the catalog)")};
  }
  if (given > 1) {
    throw UsageError{
        Tr("conflicting flags: give only one of a catalog name, --config and --params")};
  }
  const bool shape_flags = !fl.hidden.empty() || !fl.layers.empty() || !fl.heads.empty() ||
                           !fl.kv_heads.empty() || !fl.intermediate.empty() || !fl.vocab.empty() ||
                           !fl.experts.empty() || !fl.active_experts.empty();
  if (shape_flags && fl.params.empty()) {
    throw UsageError{
        Tr("conflicting flags: --hidden, --layers, --heads, --kv-heads, "
           "--intermediate, --vocab, --experts and --active-experts go with --params")};
  }
  if (!fl.model.empty()) {
    *source = "catalog";
    if (const ModelSpec* m = FindModel(fl.model)) return *m;
    std::string names;
    for (const auto& n : ClosestModelNames(fl.model, 3)) names += (names.empty() ? "" : ", ") + n;
    throw UsageError{
        TrFormat("unknown model '{}' (closest: {}; see --list-models, or use "
                 "--config or --params)",
                 fl.model, names)};
  }
  if (!fl.config.empty()) {
    *source = "config";
    auto spec = ReadModelPath(fl.config);
    if (!spec) throw UsageError{fmt::format("--config: {}", spec.error().message)};
    if (spec->exact_params) {
      notes->push_back(
          TrFormat("exact parameter count {} read from safetensors headers", *spec->exact_params));
    }
    return std::move(spec).value();
  }
  *source = "params";
  return SpecFromParams(fl, notes);
}

Workload BuildWorkload(const PlanFlags& fl) {
  Workload w;
  w.method = Need(ParseMethod(fl.method), "--method");
  if (!IsLora(w.method) &&
      (!fl.lora_rank.empty() || !fl.lora_targets.empty() || !fl.lora_dropout.empty())) {
    throw UsageError{
        Tr("conflicting flags: --lora-rank, --lora-targets and --lora-dropout need a "
           "LoRA method (lora, qlora, nvfp4-lora), not --method full")};
  }
  if (!fl.lora_rank.empty()) w.lora_rank = Need(ParsePositiveInt(fl.lora_rank), "--lora-rank");
  if (!fl.lora_targets.empty())
    w.lora_targets = Need(ParseLoraTargets(fl.lora_targets), "--lora-targets");
  if (!fl.lora_dropout.empty()) w.lora_dropout = Fraction(fl.lora_dropout, "--lora-dropout", 0, 1);
  w.weight_dtype = fl.weight_dtype.empty() ? DefaultWeightDType(w.method)
                                           : Need(ParseDType(fl.weight_dtype), "--weight-dtype");
  const DType d = w.weight_dtype;
  const bool four_bit = d == DType::kNf4 || d == DType::kInt4 || d == DType::kNvfp4;
  const bool eight_bit = d == DType::kFp8 || d == DType::kInt8;
  if (w.method == Method::kFull && (four_bit || eight_bit)) {
    throw UsageError{
        TrFormat("conflicting flags: --method full trains every weight, which "
                 "cannot be stored as {}; use --method qlora or a 16/32-bit dtype",
                 Name(d))};
  }
  if (w.method == Method::kQlora && !four_bit && !eight_bit) {
    throw UsageError{
        TrFormat("conflicting flags: --method qlora quantizes the base weights; "
                 "--weight-dtype {} is plain LoRA (use --method lora)",
                 Name(d))};
  }
  if (w.method == Method::kNvfp4Lora && d != DType::kNvfp4) {
    throw UsageError{Tr("conflicting flags: --method nvfp4-lora needs --weight-dtype nvfp4")};
  }
  if (w.method == Method::kLora && (four_bit || eight_bit)) {
    throw UsageError{
        TrFormat("conflicting flags: --weight-dtype {} quantizes the base "
                 "weights: use --method qlora",
                 Name(d))};
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
  if (w.seq > (1 << 24)) throw UsageError{TrFormat("--seq: {} is absurdly large", w.seq)};
  if (w.batch > (1 << 20)) throw UsageError{TrFormat("--batch: {} is absurdly large", w.batch)};
  w.grad_ckpt = OnOff(fl.grad_ckpt, "--grad-ckpt");
  w.attention = Need(ParseAttention(fl.attention), "--attention");
  w.loss = Need(ParseLossKind(fl.loss), "--loss");
  w.kind = Need(ParseWorkloadKind(fl.workload), "--workload");
  if (!fl.rollout_fraction.empty()) {
    if (w.kind != WorkloadKind::kGrpo) {
      throw UsageError{Tr("conflicting flags: --rollout-fraction goes with --workload grpo")};
    }
    w.rollout_fraction = Fraction(fl.rollout_fraction, "--rollout-fraction", 0, 1);
  }
  return w;
}

Budget BuildBudget(const PlanFlags& fl, const CliEnv& env) {
  const SysRoot root(fl.root.empty() ? env.default_root : std::filesystem::path(fl.root));
  if (!fl.budget.empty()) {
    if (!fl.reserve.empty()) {
      throw UsageError{
          Tr("conflicting flags: --reserve applies to MemAvailable; --budget is "
             "already the whole budget")};
    }
    const uint64_t size = Need(ParseBytes(fl.budget), "--budget");
    auto info = ReadMemInfo(root);
    return BudgetFromSize(size, info ? std::optional<MemInfo>(*info) : std::nullopt);
  }
  // --reserve, else HEADROOM_RESERVE or [plan] reserve, else 4 GiB (config/settings.h).
  const uint64_t reserve = fl.reserve.empty() ? env.config.settings.reserve_bytes.value
                                              : Need(ParseBytes(fl.reserve, true), "--reserve");
  auto info = ReadMemInfo(root);
  if (!info) throw UsageError{TrFormat("{} (or give --budget SIZE)", info.error().message)};
  if (!info->EstimatedAvailable()) {
    throw UsageError{
        TrFormat("{}: no MemAvailable and no MemFree to estimate it from "
                 "(give --budget SIZE)",
                 root.Path("proc/meminfo").string())};
  }
  return BudgetFromMemInfo(*info, reserve, root.Path("proc/meminfo").string());
}

}  // namespace

void AddPlanInputFlags(CLI::App& app, PlanFlags& fl) {
  app.add_option("model", fl.model, Tr("catalog name, e.g. llama-3.1-70b (see --list-models)"));
  app.add_option("--config", fl.config,
                 Tr("a Hugging Face config.json, or a model folder holding one (safetensors "
                    "headers are read for the exact count)"));
  app.add_option("--params", fl.params, Tr("parameter count: 70B, 1.5e9, 350M"));
  app.add_option("--hidden", fl.hidden, Tr("with --params: hidden size"));
  app.add_option("--layers", fl.layers, Tr("with --params: decoder layers"));
  app.add_option("--heads", fl.heads, Tr("with --params: attention heads"));
  app.add_option("--kv-heads", fl.kv_heads, Tr("with --params: key/value heads"));
  app.add_option("--intermediate", fl.intermediate, Tr("with --params: MLP width"));
  app.add_option("--vocab", fl.vocab, Tr("with --params: vocabulary size"));
  app.add_option("--experts", fl.experts, Tr("with --params: MoE experts"));
  app.add_option("--active-experts", fl.active_experts, Tr("with --params: experts per token"));
  app.add_option("--method", fl.method, Tr("full|lora|qlora|nvfp4-lora (default lora)"));
  app.add_option("--lora-rank", fl.lora_rank, Tr("LoRA rank (default 16)"));
  app.add_option("--lora-targets", fl.lora_targets,
                 Tr("all-linear|attn|q,k,v,o,gate,up,down (default all-linear)"));
  app.add_option("--lora-dropout", fl.lora_dropout,
                 Tr("LoRA dropout (default 0.05; 0 saves its tensors)"));
  app.add_option("--weight-dtype", fl.weight_dtype,
                 Tr("fp32|bf16|fp16|fp8|int8|nf4|int4|nvfp4 (default from the method)"));
  app.add_option("--double-quant", fl.double_quant,
                 Tr("on|off: NF4 double quantization (default on)"));
  app.add_option("--optimizer", fl.optimizer, Tr("adamw|adamw-8bit|sgd|adafactor (default adamw)"));
  app.add_option("--optimizer-step", fl.optimizer_step,
                 Tr("foreach|fused|loop: how PyTorch runs the step (default foreach)"));
  app.add_flag("--master-weights", fl.master_weights,
               Tr("keep an fp32 master copy (fp32 optimizer states)"));
  app.add_option("--batch", fl.batch, Tr("micro-batch size (default 1)"));
  app.add_option("--seq", fl.seq, Tr("sequence or packing length in tokens (default 2048)"));
  app.add_option("--grad-ckpt", fl.grad_ckpt, Tr("on|off: gradient checkpointing (default on)"));
  app.add_option("--attention", fl.attention, Tr("sdpa|eager (default sdpa)"));
  app.add_option("--loss", fl.loss,
                 Tr("standard|chunked|fused: how the loss meets the logits (default standard)"));
  app.add_option("--workload", fl.workload, Tr("sft|dpo|grpo (default sft)"));
  app.add_option("--rollout-fraction", fl.rollout_fraction,
                 Tr("GRPO: share of the pool the inference engine reserves, as vLLM's "
                    "gpu-memory-utilization"));
  app.add_option(
      "--reserve", fl.reserve,
      Tr("kept back for the OS and driver (default 4GiB, or [plan] reserve in config.toml)"));
  app.add_option("--budget", fl.budget, Tr("use this budget instead of MemAvailable - reserve"));
  app.add_option(
      "--overhead", fl.overhead,
      Tr("replace the framework overhead estimate (CUDA context, allocator slack, host process)"));
  AddRootFlag(app, fl.root);
}

PlanInputs ResolvePlanInputs(const PlanFlags& fl, const CliEnv& env) {
  PlanInputs in;
  in.spec = ResolveModel(fl, &in.model_source, &in.model_notes);
  in.workload = BuildWorkload(fl);
  in.budget = BuildBudget(fl, env);
  in.options.pool_bytes = in.budget.pool_bytes();
  if (!fl.overhead.empty())
    in.options.overhead_bytes = Need(ParseBytes(fl.overhead, true), "--overhead");
  return in;
}

std::vector<std::string> SplitWords(std::string_view text, std::string_view flag) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : text) {
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote) throw UsageError{TrFormat("{}: unterminated quote", flag)};
  if (in_word) words.push_back(std::move(word));
  return words;
}

PlanInputs ResolvePlanWords(const std::vector<std::string>& words, std::string_view flag,
                            const std::string& default_root, const CliEnv& env) {
  PlanFlags fl;
  CLI::App app{"plan arguments", std::string(flag)};
  AddPlanInputFlags(app, fl);
  std::vector<std::string> reversed(words.rbegin(), words.rend());  // CLI11 parses it reversed
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw UsageError{fmt::format("{}: {}", flag, ParseErrorText(e))};
  }
  if (fl.root.empty()) fl.root = default_root;
  try {
    return ResolvePlanInputs(fl, env);
  } catch (const UsageError& e) {
    throw UsageError{fmt::format("{}: {}", flag, e.message)};
  }
}

}  // namespace headroom
