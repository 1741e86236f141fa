// Implementation notes: the table holds only data and captureless lambdas, so it is a
// constant; the help texts are the msgids `plan --help` has always shown (po/zh_TW.cli.po
// translates them; the CLI calls Tr). The bounds are those plan_request.cc's checks apply:
// 2^24 for a model dimension or a LoRA rank and 2^26 for a vocabulary (model/model_spec.cc's
// CompleteAndValidate), 2^20 samples per batch and 2^24 tokens per sample (past any real run,
// and inside 64-bit products), kMaxDevices nodes (plan/sharding.h).
#include "plan/plan_fields.h"

#include <fmt/format.h>

#include <array>
#include <cstdlib>
#include <string>
#include <utility>

#include "base/message.h"
#include "plan/sharding.h"
#include "plan/workload.h"

namespace headroom {
namespace {

std::string Count(int64_t n) { return std::to_string(n); }
std::string Shape(const std::optional<int64_t>& n) { return n ? std::to_string(*n) : ""; }
std::string Bytes(const std::optional<uint64_t>& n) { return n ? std::to_string(*n) : ""; }
std::string Number(double d) { return fmt::format("{}", d); }  // shortest form that reads back
std::string OnOffText(bool b) { return b ? "on" : "off"; }
std::string Of(std::string_view name) { return std::string(name); }

std::string JoinNames(const std::vector<std::string>& names) {
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : ",") + n;
  return joined;
}

constexpr int64_t kMaxDim = int64_t{1} << 24;
constexpr int64_t kMaxVocab = int64_t{1} << 26;

constexpr std::array kPlanFields{
    PlanField{.name = "model",
              .flag = "model",
              .json_key = "model",
              .text = &PlanFlagText::model,
              .help = N_("catalog name, e.g. llama-3.1-70b (see --list-models)"),
              .run_config = true,
              .of_request =
                  [](const PlanRequest& r) {
                    return r.source == ModelSource::kCatalog ? r.model : std::string();
                  }},
    PlanField{.name = "framework",
              .flag = "--framework",
              .json_key = "framework",
              .text = &PlanFlagText::framework,
              // TRANSLATORS: {} is the list of framework names, "hf, trl, unsloth, ...".
              .help = N_("the training stack whose defaults the plan takes: {} (default hf; "
                         "docs/plan-frameworks.md)"),
              .run_config = true,
              .of_request =
                  [](const PlanRequest& r) {
                    return r.workload.framework == Framework::kHf ? std::string()
                                                                  : Of(Name(r.workload.framework));
                  }},
    PlanField{.name = "config",
              .flag = "--config",
              .json_key = "config",
              .text = &PlanFlagText::config,
              .help = N_("a Hugging Face config.json, or a model folder holding one (safetensors "
                         "headers are read for the exact count)"),
              .run_config = true,
              .of_request =
                  [](const PlanRequest& r) {
                    return r.source == ModelSource::kConfig ? r.model : std::string();
                  }},
    PlanField{.name = "params",
              .flag = "--params",
              .json_key = "params",
              .kind = FieldKind::kCount,
              .text = &PlanFlagText::params,
              .help = N_("parameter count: 70B, 1.5e9, 350M"),
              .of_request =
                  [](const PlanRequest& r) {
                    return r.source == ModelSource::kParams ? std::to_string(r.params)
                                                            : std::string();
                  }},
    PlanField{.name = "hidden",
              .flag = "--hidden",
              .json_key = "hidden",
              .kind = FieldKind::kCount,
              .text = &PlanFlagText::hidden,
              .max = kMaxDim,
              .help = N_("with --params: hidden size"),
              .of_request = [](const PlanRequest& r) { return Shape(r.shape.hidden); }},
    PlanField{.name = "layers",
              .flag = "--layers",
              .json_key = "layers",
              .kind = FieldKind::kCount,
              .text = &PlanFlagText::layers,
              .max = kMaxDim,
              .help = N_("with --params: decoder layers"),
              .of_request = [](const PlanRequest& r) { return Shape(r.shape.layers); }},
    PlanField{.name = "heads",
              .flag = "--heads",
              .json_key = "heads",
              .kind = FieldKind::kCount,
              .text = &PlanFlagText::heads,
              .max = kMaxDim,
              .help = N_("with --params: attention heads"),
              .of_request = [](const PlanRequest& r) { return Shape(r.shape.heads); }},
    PlanField{.name = "kv_heads",
              .flag = "--kv-heads",
              .json_key = "kv_heads",
              .kind = FieldKind::kCount,
              .text = &PlanFlagText::kv_heads,
              .max = kMaxDim,
              .help = N_("with --params: key/value heads"),
              .of_request = [](const PlanRequest& r) { return Shape(r.shape.kv_heads); }},
    PlanField{.name = "intermediate",
              .flag = "--intermediate",
              .json_key = "intermediate",
              .kind = FieldKind::kCount,
              .text = &PlanFlagText::intermediate,
              .max = kMaxDim,
              .help = N_("with --params: MLP width"),
              .of_request = [](const PlanRequest& r) { return Shape(r.shape.intermediate); }},
    PlanField{.name = "vocab",
              .flag = "--vocab",
              .json_key = "vocab",
              .kind = FieldKind::kCount,
              .text = &PlanFlagText::vocab,
              .max = kMaxVocab,
              .help = N_("with --params: vocabulary size"),
              .of_request = [](const PlanRequest& r) { return Shape(r.shape.vocab); }},
    PlanField{.name = "experts",
              .flag = "--experts",
              .json_key = "experts",
              .kind = FieldKind::kCount,
              .text = &PlanFlagText::experts,
              .max = kMaxDim,
              .help = N_("with --params: MoE experts"),
              .of_request = [](const PlanRequest& r) { return Shape(r.shape.experts); }},
    PlanField{.name = "active_experts",
              .flag = "--active-experts",
              .json_key = "active_experts",
              .kind = FieldKind::kCount,
              .text = &PlanFlagText::active_experts,
              .max = kMaxDim,
              .help = N_("with --params: experts per token"),
              .of_request = [](const PlanRequest& r) { return Shape(r.shape.active_experts); }},
    PlanField{.name = "method",
              .flag = "--method",
              .json_key = "method",
              .text = &PlanFlagText::method,
              .help = N_("full|lora|qlora|nvfp4-lora (default lora)"),
              .run_config = true,
              .of_request = [](const PlanRequest& r) { return Of(Name(r.workload.method)); }},
    PlanField{.name = "lora_rank",
              .flag = "--lora-rank",
              .json_key = "lora_rank",
              .kind = FieldKind::kCount,
              .text = &PlanFlagText::lora_rank,
              .max = kMaxDim,
              .help = N_("LoRA rank (default 16)"),
              .run_config = true,
              .of_request =
                  [](const PlanRequest& r) {
                    return IsLora(r.workload.method) ? Count(r.workload.lora_rank) : std::string();
                  }},
    PlanField{.name = "lora_targets",
              .flag = "--lora-targets",
              .json_key = "lora_targets",
              .kind = FieldKind::kNames,
              .text = &PlanFlagText::lora_targets,
              .help = N_("all-linear|attn|q,k,v,o,gate,up,down (default all-linear)"),
              .run_config = true,
              .of_request =
                  [](const PlanRequest& r) {
                    return IsLora(r.workload.method) ? JoinNames(r.workload.lora_targets)
                                                     : std::string();
                  }},
    PlanField{.name = "lora_dropout",
              .flag = "--lora-dropout",
              .json_key = "lora_dropout",
              .kind = FieldKind::kFraction,
              .text = &PlanFlagText::lora_dropout,
              .help = N_("LoRA dropout (default 0.05; 0 saves its tensors)"),
              .run_config = true,
              .of_request =
                  [](const PlanRequest& r) {
                    return IsLora(r.workload.method) ? Number(r.workload.lora_dropout)
                                                     : std::string();
                  },
              .of_profile = [](const FrameworkProfile& p) { return Number(p.lora_dropout); }},
    PlanField{.name = "weight_dtype",
              .flag = "--weight-dtype",
              .json_key = "weight_dtype",
              .text = &PlanFlagText::weight_dtype,
              .help = N_("fp32|bf16|fp16|fp8|int8|nf4|int4|nvfp4 (default from the method)"),
              .run_config = true,
              .of_request = [](const PlanRequest& r) { return Of(Name(r.workload.weight_dtype)); }},
    PlanField{
        .name = "double_quant",
        .flag = "--double-quant",
        .json_key = "double_quant",
        .kind = FieldKind::kOnOff,
        .text = &PlanFlagText::double_quant,
        .help = N_("on|off: NF4 double quantization (default on)"),
        .run_config = true,
        .of_request = [](const PlanRequest& r) { return OnOffText(r.workload.double_quant); }},
    PlanField{.name = "optimizer",
              .flag = "--optimizer",
              .json_key = "optimizer",
              .text = &PlanFlagText::optimizer,
              .help = N_("adamw|adamw-8bit|sgd|adafactor (default from --framework: adamw; "
                         "unsloth adamw-8bit)"),
              .run_config = true,
              .of_request = [](const PlanRequest& r) { return Of(Name(r.workload.optimizer)); },
              .of_profile = [](const FrameworkProfile& p) { return Of(Name(p.optimizer)); }},
    PlanField{
        .name = "optimizer_step",
        .flag = "--optimizer-step",
        .json_key = "optimizer_step",
        .text = &PlanFlagText::optimizer_step,
        .help = N_("foreach|fused|loop: how PyTorch runs the step (default from "
                   "--framework)"),
        .run_config = true,
        .of_request = [](const PlanRequest& r) { return Of(Name(r.workload.optimizer_step)); },
        .of_profile = [](const FrameworkProfile& p) { return Of(Name(p.optimizer_step)); }},
    PlanField{
        .name = "master_weights",
        .flag = "--master-weights",
        .json_key = "master_weights",
        .kind = FieldKind::kFlag,
        .help = N_("keep an fp32 master copy (fp32 optimizer states)"),
        .of_request = [](const PlanRequest& r) { return OnOffText(r.workload.master_weights); },
        .of_profile =
            [](const FrameworkProfile& p) { return p.master_weights ? Of("on") : Of(""); }},
    PlanField{.name = "batch",
              .flag = "--batch",
              .json_key = "batch",
              .kind = FieldKind::kCount,
              .text = &PlanFlagText::batch,
              .max = int64_t{1} << 20,
              .help = N_("micro-batch size (default 1)"),
              .run_config = true,
              .of_request = [](const PlanRequest& r) { return Count(r.workload.batch); }},
    PlanField{.name = "seq",
              .flag = "--seq",
              .json_key = "seq",
              .kind = FieldKind::kCount,
              .text = &PlanFlagText::seq,
              .max = int64_t{1} << 24,
              .help = N_("sequence or packing length in tokens (default 2048)"),
              .run_config = true,
              .of_request = [](const PlanRequest& r) { return Count(r.workload.seq); }},
    PlanField{.name = "grad_ckpt",
              .flag = "--grad-ckpt",
              .json_key = "grad_ckpt",
              .kind = FieldKind::kCheckpoint,
              .text = &PlanFlagText::grad_ckpt,
              .help = N_("on|off|offload: gradient checkpointing, offload keeping the checkpoints "
                         "in host memory (default from --framework: on; unsloth offload)"),
              .run_config = true,
              .of_request =
                  [](const PlanRequest& r) {
                    return r.workload.offload_checkpoints ? Of("offload")
                                                          : OnOffText(r.workload.grad_ckpt);
                  },
              .of_profile =
                  [](const FrameworkProfile& p) {
                    return !p.grad_ckpt            ? Of("off")
                           : p.offload_checkpoints ? Of("offload")
                                                   : Of("on");
                  }},
    PlanField{.name = "attention",
              .flag = "--attention",
              .json_key = "attention",
              .text = &PlanFlagText::attention,
              .help = N_("sdpa|flash|eager (default sdpa; flash saves what sdpa saves)"),
              .run_config = true,
              .of_request = [](const PlanRequest& r) { return Of(Name(r.workload.attention)); }},
    PlanField{.name = "loss",
              .flag = "--loss",
              .json_key = "loss",
              .text = &PlanFlagText::loss,
              .help = N_("standard|chunked|fused: how the loss meets the logits (default from "
                         "--framework: standard; torchtune chunked; unsloth fused)"),
              .run_config = true,
              .of_request = [](const PlanRequest& r) { return Of(Name(r.workload.loss)); },
              .of_profile = [](const FrameworkProfile& p) { return Of(Name(p.loss)); }},
    PlanField{.name = "workload",
              .flag = "--workload",
              .json_key = "workload",
              .text = &PlanFlagText::workload,
              .help = N_("sft|dpo|grpo (default sft)"),
              .run_config = true,
              .of_request = [](const PlanRequest& r) { return Of(Name(r.workload.kind)); }},
    PlanField{.name = "rollout_fraction",
              .flag = "--rollout-fraction",
              .json_key = "rollout_fraction",
              .kind = FieldKind::kFraction,
              .text = &PlanFlagText::rollout_fraction,
              .help = N_("GRPO: share of the pool the inference engine reserves, as vLLM's "
                         "gpu-memory-utilization"),
              .run_config = true,
              .of_request =
                  [](const PlanRequest& r) {
                    return r.workload.kind == WorkloadKind::kGrpo
                               ? Number(r.workload.rollout_fraction)
                               : std::string();
                  }},
    PlanField{.name = "devices",
              .flag = "--devices",
              .json_key = "devices",
              .kind = FieldKind::kCount,
              .text = &PlanFlagText::devices,
              .max = kMaxDevices,
              .help = N_("nodes sharing the run, one device each, e.g. 2 DGX Sparks (default 1); "
                         "the plan is per node"),
              .run_config = true,
              .of_request =
                  [](const PlanRequest& r) {
                    return r.parallel.devices > 1 ? Count(r.parallel.devices) : std::string();
                  }},
    PlanField{.name = "sharding",
              .flag = "--sharding",
              .json_key = "sharding",
              .text = &PlanFlagText::sharding,
              .help = N_("ddp|fsdp|zero2|zero3|pipeline: how --devices share it (default ddp)"),
              .run_config = true,
              .of_request =
                  [](const PlanRequest& r) {
                    return r.parallel.sharding_given ? Of(Name(r.parallel.sharding))
                                                     : std::string();
                  }},
    PlanField{.name = "reserve",
              .flag = "--reserve",
              .json_key = "reserve_bytes",
              .kind = FieldKind::kCount,
              .text = &PlanFlagText::reserve,
              .help = N_("kept back for the OS and driver (default 4GiB, or [plan] reserve in "
                         "config.toml)"),
              .of_request = [](const PlanRequest& r) { return Bytes(r.reserve_bytes); }},
    PlanField{.name = "budget",
              .flag = "--budget",
              .json_key = "budget_bytes",
              .kind = FieldKind::kCount,
              .text = &PlanFlagText::budget,
              .help = N_("use this budget instead of MemAvailable - reserve"),
              .of_request = [](const PlanRequest& r) { return Bytes(r.budget_bytes); }},
    PlanField{.name = "overhead",
              .flag = "--overhead",
              .json_key = "overhead_bytes",
              .kind = FieldKind::kCount,
              .text = &PlanFlagText::overhead,
              .help = N_("replace the framework overhead estimate (CUDA context, allocator "
                         "slack, host process)"),
              .of_request = [](const PlanRequest& r) { return Bytes(r.overhead_bytes); }},
    PlanField{.name = "root",
              .flag = "--root",
              .json_key = "root",
              .text = &PlanFlagText::root,
              .help = N_("read proc/, sys/ and etc/ below this directory instead of /"),
              .of_request = [](const PlanRequest& r) { return r.root; }},
    PlanField{.name = "platform",
              .flag = "--platform",
              .json_key = "platform",
              .text = &PlanFlagText::platform,
              .help = N_("unified|discrete: whether the GPU shares the host's memory (default: "
                         "[platform] kind in config.toml, discrete only when it says so)"),
              .of_request =
                  [](const PlanRequest& r) {
                    if (!r.unified_memory) return std::string();
                    return *r.unified_memory ? Of("unified") : Of("discrete");
                  }},
};

// Every string member of PlanFlagText has a row (and master_weights, a bool, the kFlag row):
// a member added without one changes the size and stops the build here.
static_assert(sizeof(PlanFlagText) ==
              (kPlanFields.size() - 1) * sizeof(std::string) + alignof(std::string));

}  // namespace

std::span<const PlanField> PlanFields() { return kPlanFields; }

const PlanField* FindPlanField(std::string_view name) {
  for (const PlanField& f : kPlanFields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string FieldText(const PlanFlagText& text, const PlanField& field) {
  if (!field.text) return text.master_weights ? "on" : "";
  return text.*field.text;
}

void SetFieldText(PlanFlagText& text, const PlanField& field, std::string value) {
  if (!field.text) {
    text.master_weights = !value.empty() && value != "off";
    return;
  }
  text.*field.text = std::move(value);
}

PlanFlagText RequestText(const PlanRequest& request) {
  PlanFlagText text;
  for (const PlanField& f : kPlanFields) SetFieldText(text, f, f.of_request(request));
  return text;
}

std::string_view Name(PlanSource s) {
  switch (s) {
    case PlanSource::kDefault:
      return "default";
    case PlanSource::kProfile:
      return "profile";
    case PlanSource::kFile:
      return "file";
    case PlanSource::kFlag:
      return "flag";
  }
  return "default";
}

std::vector<std::string> GivenFields(const PlanFlagText& text) {
  const PlanFlagText defaults;
  std::vector<std::string> given;
  for (const PlanField& f : kPlanFields) {
    if (FieldText(text, f) != FieldText(defaults, f)) given.emplace_back(f.name);
  }
  return given;
}

namespace {

bool Gives(const PlanTextLayer& layer, std::string_view name) {
  for (const auto& g : layer.given) {
    if (g == name) return true;
  }
  return false;
}

// Whether the file's value of `name` yields to what the flags give (LayerPlanText's rules).
bool FileYields(std::string_view name, const PlanTextLayer& flags) {
  const bool model_given =
      Gives(flags, "model") || Gives(flags, "config") || Gives(flags, "params");
  if (model_given && (name == "model" || name == "config")) return true;
  if (Gives(flags, "method")) {
    if (name == "weight_dtype") return true;
    if (flags.text.method == "full" && name.starts_with("lora_")) return true;
  }
  return Gives(flags, "workload") && name == "rollout_fraction";
}

}  // namespace

LayeredPlanText LayerPlanText(const PlanTextLayer& flags, const PlanTextLayer* file) {
  LayeredPlanText out;
  for (const PlanField& f : kPlanFields) {
    if (Gives(flags, f.name)) {
      SetFieldText(out.text, f, FieldText(flags.text, f));
      out.sources[f.name] = PlanSource::kFlag;
    } else if (file && Gives(*file, f.name) && !FileYields(f.name, flags)) {
      SetFieldText(out.text, f, FieldText(file->text, f));
      out.sources[f.name] = PlanSource::kFile;
    } else {
      out.sources[f.name] = PlanSource::kDefault;
    }
  }
  // The profile of the framework chosen above fills what is still the default's "".
  Framework framework = Framework::kHf;
  if (!out.text.framework.empty()) {
    auto parsed = ParseFramework(out.text.framework);
    if (!parsed) return out;
    framework = *parsed;
  }
  const FrameworkProfile& profile = ProfileOf(framework);
  const auto method = ParseMethod(out.text.method);
  const bool lora = method && IsLora(*method);
  for (const PlanField& f : kPlanFields) {
    if (!f.of_profile || !FieldText(out.text, f).empty()) continue;
    if (f.name.starts_with("lora_") && !lora) continue;
    std::string value = f.of_profile(profile);
    if (value.empty()) continue;
    SetFieldText(out.text, f, std::move(value));
    out.sources[f.name] = PlanSource::kProfile;
  }
  return out;
}

nlohmann::json PlanSourcesToJson(const PlanSources& sources) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, source] : sources) j[std::string(name)] = Name(source);
  return j;
}

}  // namespace headroom
