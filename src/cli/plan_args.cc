// plan's input flags: their definitions (shared by `plan`, `ladder --plan-args`, `report
// --plan-args` and `doctor --workload`), --from FILE laid under them (ApplyRunConfig); the
// checks and the resolution are plan/plan_request.
#include "cli/plan_args.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "cli/cli11_i18n.h"
#include "cli/common_flags.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "plan/framework_profile.h"
#include "plan/plan_words.h"

namespace headroom {

namespace {

// "hf, trl, unsloth, ...": the --framework names, with room for a help screen to break.
std::string FrameworkNamesForHelp() {
  std::string names;
  for (const auto& p : FrameworkProfiles())
    names += (names.empty() ? "" : ", ") + std::string(p.name);
  return names;
}

}  // namespace

void AddPlanInputFlags(CLI::App& app, PlanFlags& fl) {
  app.add_option("model", fl.model, Tr("catalog name, e.g. llama-3.1-70b (see --list-models)"));
  app.add_option("--from", fl.from,
                 Tr("the run's own configuration file (axolotl, LLaMA-Factory, torchtune or TRL "
                    "YAML, or TRL JSON); flags beside it override it"));
  app.add_option("--framework", fl.framework,
                 TrFormat("the training stack whose defaults the plan takes: {} (default hf; "
                          "docs/plan-frameworks.md)",
                          FrameworkNamesForHelp()));
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
  app.add_option("--optimizer", fl.optimizer,
                 Tr("adamw|adamw-8bit|sgd|adafactor (default from --framework: adamw; unsloth "
                    "adamw-8bit)"));
  app.add_option("--optimizer-step", fl.optimizer_step,
                 Tr("foreach|fused|loop: how PyTorch runs the step (default from --framework)"));
  app.add_flag("--master-weights", fl.master_weights,
               Tr("keep an fp32 master copy (fp32 optimizer states)"));
  app.add_option("--batch", fl.batch, Tr("micro-batch size (default 1)"));
  app.add_option("--seq", fl.seq, Tr("sequence or packing length in tokens (default 2048)"));
  app.add_option("--grad-ckpt", fl.grad_ckpt,
                 Tr("on|off|offload: gradient checkpointing, offload keeping the checkpoints in "
                    "host memory (default from --framework: on; unsloth offload)"));
  app.add_option("--attention", fl.attention, Tr("sdpa|eager (default sdpa)"));
  app.add_option("--loss", fl.loss,
                 Tr("standard|chunked|fused: how the loss meets the logits (default from "
                    "--framework: standard; torchtune chunked; unsloth fused)"));
  app.add_option("--workload", fl.workload, Tr("sft|dpo|grpo (default sft)"));
  app.add_option("--rollout-fraction", fl.rollout_fraction,
                 Tr("GRPO: share of the pool the inference engine reserves, as vLLM's "
                    "gpu-memory-utilization"));
  app.add_option("--devices", fl.devices,
                 Tr("nodes sharing the run, one device each, e.g. 2 DGX Sparks (default 1); the "
                    "plan is per node"));
  app.add_option("--sharding", fl.sharding,
                 Tr("ddp|fsdp|zero2|zero3: how --devices share it (default ddp)"));
  app.add_option(
      "--reserve", fl.reserve,
      Tr("kept back for the OS and driver (default 4GiB, or [plan] reserve in config.toml)"));
  app.add_option("--budget", fl.budget, Tr("use this budget instead of MemAvailable - reserve"));
  app.add_option(
      "--overhead", fl.overhead,
      Tr("replace the framework overhead estimate (CUDA context, allocator slack, host process)"));
  AddRootFlag(app, fl.root);
  app.add_option("--platform", fl.platform,
                 Tr("unified|discrete: whether the GPU shares the host's memory (default: "
                    "[platform] kind in config.toml, discrete only when it says so)"));
}

std::vector<std::filesystem::path> HfCacheDirs(const GetEnvFn& getenv) {
  const auto var = [&](const char* name) -> std::string {
    const char* v = getenv(name);
    return v ? v : "";
  };
  if (!var("HF_HUB_CACHE").empty()) return {var("HF_HUB_CACHE")};
  if (!var("HF_HOME").empty()) return {std::filesystem::path(var("HF_HOME")) / "hub"};
  if (!var("XDG_CACHE_HOME").empty()) {
    return {std::filesystem::path(var("XDG_CACHE_HOME")) / "huggingface" / "hub"};
  }
  if (!var("HOME").empty()) return {std::filesystem::path(var("HOME")) / ".cache/huggingface/hub"};
  return {};
}

namespace {

// A PlanFlagText field (RunConfig::set's names) and the option that sets it on the command
// line; "" = no option of that name is defined here (yet).
std::string OptionName(std::string_view field) {
  if (field == "model") return "model";
  std::string name = "--" + std::string(field);
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

bool Given(const CLI::App& app, std::string_view field) {
  const CLI::Option* opt = app.get_option_no_throw(OptionName(field));
  return opt != nullptr && opt->count() > 0;
}

}  // namespace

namespace {

// ApplyRunConfig with "given on the command line" asked of `given`.
RunConfig ApplyRunConfigGiven(const std::function<bool(std::string_view)>& given, PlanFlags& fl,
                              const GetEnvFn& getenv) {
  RunConfigContext context;
  context.hf_cache_dirs = HfCacheDirs(getenv);
  auto loaded = LoadRunConfig(fl.from, context);
  if (!loaded) throw UsageError{"--from: " + TranslatedText(loaded.error().what)};
  RunConfig config = std::move(*loaded);
  const bool model_given = given("model") || given("config") || given("params");
  if (!model_given && config.model_error) {
    throw UsageError{"--from: " + TranslatedText(*config.model_error)};
  }
  if (model_given) config.model_origin.clear();  // the file's model is not the one planned
  // A method on the command line makes the file's dtype moot, and a full method its LoRA.
  const bool method_given = given("method");
  const bool full = method_given && fl.method == "full";
  PlanFlagText& text = fl;
  for (const std::string& field : config.set) {
    if (given(field)) continue;
    if (model_given && (field == "model" || field == "config")) continue;
    if (method_given && field == "weight_dtype") continue;
    if (full && field.starts_with("lora_")) continue;
    if (given("workload") && field == "rollout_fraction") continue;
    *RunConfigField(text, field) = *RunConfigField(config.text, field);
  }
  return config;
}

// The words with --from's value (--from FILE or --from=FILE) replaced by `path`.
std::vector<std::string> WithFromPath(std::vector<std::string> words, const std::string& path) {
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "--from" && i + 1 < words.size()) {
      words[++i] = path;
    } else if (words[i].starts_with("--from=")) {
      words[i] = "--from=" + path;
    }
  }
  return words;
}

}  // namespace

RunConfig ApplyRunConfig(const CLI::App& app, PlanFlags& fl, const GetEnvFn& getenv) {
  return ApplyRunConfigGiven([&](std::string_view field) { return Given(app, field); }, fl, getenv);
}

PlanContext CliPlanContext(const CliEnv& env, const std::string& default_root) {
  PlanContext context{default_root.empty() ? env.default_root : std::filesystem::path(default_root),
                      env.config.settings.reserve_bytes.value};
  context.unified_memory = env.config.settings.platform_kind.value != PlatformKind::kDiscrete;
  return context;
}

PlanInputs ResolvePlanInputs(const PlanFlags& fl, const CliEnv& env) {
  Message error;
  auto request = ParsePlanRequest(fl, &error);
  if (!request) throw UsageError{TranslatedText(error)};
  auto in = ResolvePlanRequest(*request, CliPlanContext(env), &error);
  if (!in) throw UsageError{TranslatedText(error)};
  return std::move(*in);
}

std::vector<std::string> SplitWords(std::string_view text, std::string_view flag) {
  Message error;
  auto words = SplitShellWords(text, flag, &error);
  if (!words) throw UsageError{TranslatedText(error)};
  return std::move(*words);
}

PlanWords ReadPlanWords(const std::vector<std::string>& words, std::string_view flag,
                        PlanFlags base, const std::vector<std::string>& base_given) {
  PlanFlags fl = std::move(base);
  fl.from.clear();
  CLI::App app{"plan arguments", std::string(flag)};
  AddPlanInputFlags(app, fl);
  std::vector<std::string> reversed(words.rbegin(), words.rend());  // CLI11 parses it reversed
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw UsageError{fmt::format("{}: {}", flag, ParseErrorText(e))};
  }
  PlanWords out;
  out.words = words;
  if (!fl.from.empty()) {
    // Made absolute now: the same file, whichever folder the words are read again from.
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(fl.from, ec);
    if (!ec) fl.from = absolute.lexically_normal().string();
    const auto given = [&](std::string_view field) {
      return Given(app, field) ||
             std::find(base_given.begin(), base_given.end(), field) != base_given.end();
    };
    try {
      RunConfig config = ApplyRunConfigGiven(given, fl, std::getenv);
      out.from = FromFile{fl.from, std::move(config)};
    } catch (const UsageError& e) {
      throw UsageError{fmt::format("{}: {}", flag, e.message)};
    }
    out.words = WithFromPath(words, fl.from);
  }
  Message error;
  auto request = ParsePlanRequest(fl, &error);
  if (!request) throw UsageError{fmt::format("{}: {}", flag, TranslatedText(error))};
  out.request = std::move(*request);
  return out;
}

PlanRequest ParsePlanWords(const std::vector<std::string>& words, std::string_view flag,
                           PlanFlags base) {
  return ReadPlanWords(words, flag, std::move(base)).request;
}

PlanRequest ParseWorkloadRequest(const std::string& text, std::optional<FromFile>* from) {
  std::vector<std::string> flags;
  std::vector<std::string> given;
  Message error;
  auto fields = ParseWorkloadWords(SplitWords(text, "--workload"), &flags, &error, &given);
  if (!fields) throw UsageError{TranslatedText(error)};
  PlanFlags fl;
  static_cast<PlanFlagText&>(fl) = std::move(*fields);
  PlanWords read = ReadPlanWords(flags, "--workload", std::move(fl), given);
  if (from) *from = std::move(read.from);
  return std::move(read.request);
}

PlanInputs ResolvePlanWords(const std::vector<std::string>& words, std::string_view flag,
                            const std::string& default_root, const CliEnv& env,
                            std::optional<FromFile>* from) {
  PlanWords read = ReadPlanWords(words, flag);
  if (from) *from = std::move(read.from);
  return ResolveRequest(read.request, flag, default_root, env);
}

PlanInputs ResolveRequest(const PlanRequest& request, std::string_view flag,
                          const std::string& default_root, const CliEnv& env) {
  Message error;
  auto in = ResolvePlanRequest(request, CliPlanContext(env, default_root), &error);
  if (!in) throw UsageError{fmt::format("{}: {}", flag, TranslatedText(error))};
  return std::move(*in);
}

}  // namespace headroom
