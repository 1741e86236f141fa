// plan's input flags: their definitions (shared by `plan`, `ladder --plan-args`, `report
// --plan-args` and `doctor --workload`); the checks and the resolution are plan/plan_request.
#include "cli/plan_args.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/cli11_i18n.h"
#include "cli/common_flags.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "plan/plan_words.h"

namespace headroom {

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

PlanContext CliPlanContext(const CliEnv& env, const std::string& default_root) {
  return {default_root.empty() ? env.default_root : std::filesystem::path(default_root),
          env.config.settings.reserve_bytes.value};
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

PlanRequest ParsePlanWords(const std::vector<std::string>& words, std::string_view flag,
                           PlanFlags base) {
  PlanFlags fl = std::move(base);
  CLI::App app{"plan arguments", std::string(flag)};
  AddPlanInputFlags(app, fl);
  std::vector<std::string> reversed(words.rbegin(), words.rend());  // CLI11 parses it reversed
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw UsageError{fmt::format("{}: {}", flag, ParseErrorText(e))};
  }
  Message error;
  auto request = ParsePlanRequest(fl, &error);
  if (!request) throw UsageError{fmt::format("{}: {}", flag, TranslatedText(error))};
  return std::move(*request);
}

PlanRequest ParseWorkloadRequest(const std::string& text) {
  std::vector<std::string> flags;
  Message error;
  auto fields = ParseWorkloadWords(SplitWords(text, "--workload"), &flags, &error);
  if (!fields) throw UsageError{TranslatedText(error)};
  PlanFlags fl;
  static_cast<PlanFlagText&>(fl) = std::move(*fields);
  return ParsePlanWords(flags, "--workload", std::move(fl));
}

PlanInputs ResolvePlanWords(const std::vector<std::string>& words, std::string_view flag,
                            const std::string& default_root, const CliEnv& env) {
  return ResolveRequest(ParsePlanWords(words, flag), flag, default_root, env);
}

PlanInputs ResolveRequest(const PlanRequest& request, std::string_view flag,
                          const std::string& default_root, const CliEnv& env) {
  Message error;
  auto in = ResolvePlanRequest(request, CliPlanContext(env, default_root), &error);
  if (!in) throw UsageError{fmt::format("{}: {}", flag, TranslatedText(error))};
  return std::move(*in);
}

}  // namespace headroom
