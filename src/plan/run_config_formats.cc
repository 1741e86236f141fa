// Implementation notes: one reader per stack (axolotl and LLaMA-Factory here, torchtune and
// TRL in their own files), and the helpers they share. Each takes the keys that decide a plan term,
// says what that stack does when the file is silent (each default with the public source
// file it comes from), and lists what is left. The keys a reader skips silently are those
// that leave peak memory alone: schedules, logging, saving, datasets, hub settings. The
// tables are in docs/plan.md ("Plan from the run's config").
#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/text.h"
#include "model/catalog.h"
#include "plan/framework_profile.h"
#include "plan/run_config_reader.h"
#include "plan/workload.h"

namespace headroom::run_config_detail {

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

std::string Join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : std::string(sep)) + item;
  return out;
}

// An optimizer as transformers' OptimizerNames spell it (training_args.py; axolotl and
// LLaMA-Factory take the same names): the plan's optimizer and step, or false when the
// planner has no model of it.
bool SetHfOptimizer(Reader& r, const std::string& key, const std::string& name) {
  const std::string n = AsciiLower(name);
  if (n == "adamw_torch" || n == "adamw_hf" || n == "paged_adamw_32bit" || n == "paged_adamw" ||
      n == "adamw_torch_xla") {
    r.Set("optimizer", "adamw");
  } else if (n == "adamw_torch_fused" || n == "adamw_apex_fused" || n == "adamw_torch_npu_fused") {
    r.Set("optimizer", "adamw");
    r.Set("optimizer_step", "fused");
  } else if (n == "adamw_bnb_8bit" || n == "adamw_8bit" || n == "paged_adamw_8bit" ||
             n == "bnb_8bit") {
    r.Set("optimizer", "adamw-8bit");
  } else if (n == "adafactor") {
    r.Set("optimizer", "adafactor");
  } else if (n == "sgd") {
    r.Set("optimizer", "sgd");
  } else {
    r.NotModelled(key + ": " + name);
    return false;
  }
  return true;
}

// LoRA target names to the plan's list (plan/workload's ParseLoraTargets spellings); names it
// does not know (lm_head, embed_tokens) are listed as not modelled.
void SetLoraTargets(Reader& r, const std::string& key, const std::vector<std::string>& names) {
  std::vector<std::string> known;
  for (const auto& name : names) {
    const std::string n = AsciiLower(name);
    if (n == "all-linear" || n == "all_linear" || n == "all") {
      r.Set("lora_targets", "all-linear");
      return;
    }
    if (ParseLoraTargets(n)) {
      known.push_back(n);
    } else {
      r.NotModelled(key + ": " + name);
    }
  }
  if (!known.empty()) r.Set("lora_targets", Join(known, ","));
}

// Attention as transformers' attn_implementation names it: eager materializes the scores;
// sdpa and the flash kernels (flash_attention_2, _3) do not, and save the same tensors
// (plan/workload.h: --attention flash plans them as sdpa's).
void SetAttention(Reader& r, const std::string& key, const std::string& name) {
  const std::string n = AsciiLower(name);
  if (n == "eager") {
    r.Set("attention", "eager");
  } else if (Contains(n, "flash")) {
    r.Set("attention", "flash");
  } else if (n == "sdpa") {
    r.Set("attention", "sdpa");
  } else {
    r.NotModelled(key + ": " + name);
  }
}

// FSDP as TrainingArguments and axolotl write it: "full_shard auto_wrap" or a list.
void SetFsdp(Reader& r, const std::vector<std::string>& options) {
  for (const auto& o : options) {
    const std::string n = AsciiLower(o);
    if (n == "full_shard" || n == "hybrid_shard") r.Set("sharding", "fsdp");
    if (n == "shard_grad_op" || n == "hybrid_shard_zero2") r.Set("sharding", "zero2");
    if (n == "offload") r.NotModelled("fsdp: offload");
  }
}

// TrainingArguments' batches (LLaMA-Factory and TRL take the same): the training micro batch,
// 8 when absent; an evaluation batch larger than it can be the run's peak, which the plan,
// a training step's, does not cover, so it is listed.
void ReadTrainerBatch(Reader& r) {
  const int64_t batch = r.Count("per_device_train_batch_size").value_or(8);
  r.Set("batch", std::to_string(batch));
  const int64_t eval = r.Count("per_device_eval_batch_size").value_or(8);
  const bool evaluates = r.Node("eval_strategy") || r.Node("evaluation_strategy") ||
                         r.Node("do_eval") || r.Node("val_size") || r.Node("eval_steps");
  const YamlNode* strategy = r.Node("eval_strategy");
  const bool off = (strategy && strategy->scalar == "no") || !r.Bool("do_eval").value_or(true);
  if (evaluates && !off && eval > batch) {
    r.NotModelled(fmt::format("per_device_eval_batch_size: {}", eval));
  }
}

void ReadFsdpConfig(Reader& r) {
  if (const auto strategy = r.Text("fsdp_config.fsdp_sharding_strategy")) {
    SetFsdp(r, {*strategy});
  }
  if (r.Node("fsdp_config") && !r.out().Sets("sharding")) r.Set("sharding", "fsdp");
  for (const char* key : {"fsdp_config.fsdp_offload_params", "fsdp_config.offload_params",
                          "fsdp_config.cpu_offload"}) {
    if (r.Bool(key).value_or(false)) r.NotModelled(key);
  }
  // What to wrap, how to save and how to prefetch leave the per-device peak as the sharding
  // has it; fsdp_limit_all_gathers and fsdp_cpu_ram_efficient_loading do not, and are listed.
  r.Skip({"fsdp_config.fsdp_auto_wrap_policy", "fsdp_config.auto_wrap_policy",
          "fsdp_config.fsdp_transformer_layer_cls_to_wrap",
          "fsdp_config.transformer_layer_cls_to_wrap", "fsdp_config.fsdp_state_dict_type",
          "fsdp_config.state_dict_type", "fsdp_config.fsdp_sync_module_states",
          "fsdp_config.fsdp_use_orig_params", "fsdp_config.fsdp_backward_prefetch",
          "fsdp_config.reshard_after_forward", "fsdp_config.fsdp_version"});
}

namespace {

// The keys of this format that leave peak memory alone, skipped without a word.
const std::set<std::string_view>& AxolotlSilentKeys() {
  static const std::set<std::string_view> kKeys{"strict",
                                                "datasets",
                                                "test_datasets",
                                                "dataset_prepared_path",
                                                "val_set_size",
                                                "output_dir",
                                                "wandb_project",
                                                "wandb_entity",
                                                "wandb_watch",
                                                "wandb_name",
                                                "wandb_log_model",
                                                "gradient_accumulation_steps",
                                                "num_epochs",
                                                "max_steps",
                                                "lr_scheduler",
                                                "learning_rate",
                                                "warmup_steps",
                                                "warmup_ratio",
                                                "evals_per_epoch",
                                                "eval_steps",
                                                "saves_per_epoch",
                                                "save_steps",
                                                "save_strategy",
                                                "weight_decay",
                                                "special_tokens",
                                                "chat_template",
                                                "logging_steps",
                                                "resume_from_checkpoint",
                                                "lora_model_dir",
                                                "lora_alpha",
                                                "model_type",
                                                "tokenizer_type",
                                                "hub_model_id",
                                                "hub_strategy",
                                                "seed",
                                                "train_on_inputs",
                                                "group_by_length",
                                                "early_stopping_patience",
                                                "local_rank",
                                                "max_grad_norm",
                                                "save_total_limit",
                                                "dataset_processes",
                                                "shuffle_merged_datasets",
                                                "trust_remote_code",
                                                "save_first_step",
                                                "use_tensorboard",
                                                "tokenizer_config",
                                                "base_model_config",
                                                "fsdp_final_state_dict_type",
                                                "cut_cross_entropy",
                                                "lora_fan_in_fan_out",
                                                "embeddings_skip_upcast",
                                                "auto_resume_from_checkpoints",
                                                "loss_watchdog_threshold",
                                                "loss_watchdog_patience",
                                                "chat_template_jinja",
                                                "dataset_exact_deduplication"};
  return kKeys;
}

// axolotl's gradient checkpointing and activation offloading (docs/plan.md, "Plan from the
// run's config"). `gradient_checkpointing: offload` is `gradient_checkpointing: true` with
// `activation_offloading: true` (utils/schemas/validation.py,
// check_gradient_checkpointing_w_offload; offload_disk: activation_offloading disk). With
// activation_offloading true or legacy, TRL's OffloadActivations moves what autograd saves
// to the host (core/trainers/mixins/activation_checkpointing.py): a full fine-tune keeps
// the recompute and offloads the checkpoints, each layer's input (loaders/model.py,
// _apply_activation_checkpointing: ac_wrap_hf_model); with an adapter the offload replaces
// the recompute, so every activation a layer saves is offloaded (axolotl 0.18, #3733) and
// on one unified pool all of it stays there: planned as --grad-ckpt off, and listed.
// hidden_states offloads only each layer's checkpointed input under HF checkpointing.
void ReadAxolotlCheckpointing(Reader& r, bool adapter) {
  std::string key;  // the key that asks for offloading, as written
  std::string mode;
  const YamlNode* ckpt = r.Node("gradient_checkpointing");
  bool on = false;
  if (ckpt && ckpt->kind == YamlNode::Kind::kScalar &&
      (ckpt->scalar == "offload" || ckpt->scalar == "offload_disk" || ckpt->scalar == "unsloth")) {
    on = true;
    key = "gradient_checkpointing: " + ckpt->scalar;
    // "unsloth" (axolotl before activation_offloading): Unsloth's offloaded checkpointer,
    // each layer's input to the host (monkeypatch/gradient_checkpointing/offload_cpu.py).
    mode = ckpt->scalar == "offload"   ? "true"
           : ckpt->scalar == "unsloth" ? "hidden_states"
                                       : "disk";
  } else {
    on = r.Bool("gradient_checkpointing").value_or(false);
  }
  const YamlNode* ao = r.Node("activation_offloading");
  if (ao && ao->kind == YamlNode::Kind::kScalar && mode.empty()) {
    const std::string v = AsciiLower(ao->scalar);
    if (v == "true" || v == "legacy" || v == "disk" || v == "hidden_states") {
      key = "activation_offloading: " + ao->scalar;
      mode = v;
    } else if (v != "false" && !v.empty()) {
      r.NotModelled("activation_offloading: " + ao->scalar);
    }
  }
  if (mode.empty()) {
    r.Set("grad_ckpt", on ? "on" : "off");
  } else if (mode == "hidden_states" || ((mode == "true" || mode == "legacy") && !adapter)) {
    r.Set("grad_ckpt", "offload");
  } else if (mode == "disk") {
    r.Set("grad_ckpt", "on");
    r.NotModelled(key);
  } else {
    r.Set("grad_ckpt", "off");
    r.NotModelled(key +
                  " (with an adapter every activation is offloaded: planned as "
                  "--grad-ckpt off)");
  }
}

// axolotl's attention: attn_implementation (transformers' names), or the legacy flags
// (utils/schemas/enums.py LEGACY_ATTN_FLAG_TO_IMPL, the first set wins): flash_attention is
// flash_attention_2, sdp_attention sdpa, eager_attention eager.
void ReadAxolotlAttention(Reader& r) {
  if (auto impl = r.Text("attn_implementation")) {
    SetAttention(r, "attn_implementation", *impl);
    return;
  }
  std::string chosen;
  for (const auto& [flag, value] :
       {std::pair<const char*, const char*>{"xformers_attention", "sdpa"},
        {"flash_attention", "flash"},
        {"sdp_attention", "sdpa"},
        {"eager_attention", "eager"}}) {
    if (r.Bool(flag).value_or(false) && chosen.empty()) chosen = value;
  }
  if (!chosen.empty()) r.Set("attention", chosen);
}

}  // namespace

// axolotl: keys from axolotl/utils/schemas/config.py (AxolotlInputConfig) and its parts.
void ReadAxolotl(Reader& r, const RunConfigContext& context) {
  if (auto base = r.Text("base_model")) {
    ResolveBaseModel(*base, "base_model", context, r);
  } else {
    r.out().model_error = MsgFrom("{}: {}", r.file(), Msg("base_model: not given"));
  }
  const std::string adapter = AsciiLower(r.Text("adapter").value_or(""));
  const bool four = r.Bool("load_in_4bit").value_or(false);
  const bool eight = r.Bool("load_in_8bit").value_or(false);
  bool lora = false;
  if (adapter.empty()) {
    r.Set("method", "full");
    if (four || eight) r.NotModelled(four ? "load_in_4bit" : "load_in_8bit");
  } else if (adapter == "lora" || adapter == "qlora") {
    lora = true;
    if (adapter == "qlora" || four) {
      r.Set("method", "qlora");
    } else if (eight) {
      r.Set("method", "qlora");
      r.Set("weight_dtype", "int8");
    } else {
      r.Set("method", "lora");
    }
  } else {
    r.Set("method", "full");
    r.NotModelled("adapter: " + adapter);
  }
  if (lora) {
    if (auto rank = r.Count("lora_r")) r.Set("lora_rank", std::to_string(*rank));
    if (auto dropout = r.Number("lora_dropout"))
      r.Set("lora_dropout", fmt::format("{:g}", *dropout));
    if (r.Bool("lora_target_linear").value_or(false)) {
      r.Set("lora_targets", "all-linear");
      r.Skip({"lora_target_modules"});
    } else if (auto targets = r.TextList("lora_target_modules")) {
      SetLoraTargets(r, "lora_target_modules", *targets);
    }
  }
  // micro_batch_size defaults to 1 (schemas/training.py).
  r.Set("batch", std::to_string(r.Count("micro_batch_size").value_or(1)));
  if (auto seq = r.Count("sequence_len")) r.Set("seq", std::to_string(*seq));
  r.Skip({"sample_packing", "pad_to_sequence_len", "eval_sample_packing"});
  // gradient_checkpointing: bool, "offload" or "offload_disk" (schemas/config.py); false
  // when absent.
  ReadAxolotlCheckpointing(r, !adapter.empty());
  // paged_adamw_32bit: 32-bit AdamW states, paged_adamw_8bit 8-bit (SetHfOptimizer).
  if (auto opt = r.Text("optimizer")) SetHfOptimizer(r, "optimizer", *opt);
  ReadAxolotlAttention(r);
  // rl: dpo, ipo, kto, orpo, simpo, grpo (schemas/enums.py RLType).
  if (auto rl = r.Text("rl")) {
    const std::string kind = AsciiLower(*rl);
    if (kind == "dpo" || kind == "ipo") {
      r.Set("workload", "dpo");
    } else if (kind == "grpo") {
      r.Set("workload", "grpo");
      if (auto util = r.Number("vllm.gpu_memory_utilization")) {
        r.Set("rollout_fraction", fmt::format("{:g}", *util));
      }
    } else {
      r.NotModelled("rl: " + *rl);
    }
  }
  // Plugins (axolotl/integrations/): cut cross entropy, or Liger's fused linear cross entropy,
  // never materialize the logits.
  for (const auto& plugin : r.TextList("plugins").value_or(std::vector<std::string>{})) {
    if (Contains(plugin, "CutCrossEntropy")) {
      if (r.Bool("cut_cross_entropy").value_or(true)) r.Set("loss", "fused");
    } else if (Contains(plugin, "LigerPlugin")) {
      if (r.Bool("liger_fused_linear_cross_entropy").value_or(false)) r.Set("loss", "fused");
    } else {
      r.NotModelled("plugins: " + plugin);
    }
  }
  if (auto ds = r.Text("deepspeed")) ReadDeepSpeed(r, *ds, context);
  if (auto fsdp = r.TextList("fsdp")) SetFsdp(r, *fsdp);
  ReadFsdpConfig(r);
  r.Skip({"fsdp_version", "bf16", "fp16", "tf32", "gradient_checkpointing_kwargs"});
  r.ListRest(AxolotlSilentKeys(), {"fsdp_config"});
}

namespace {

// The keys of this format that leave peak memory alone, skipped without a word.
const std::set<std::string_view>& LlamaFactorySilentKeys() {
  static const std::set<std::string_view> kKeys{"do_train",
                                                "do_eval",
                                                "do_predict",
                                                "dataset",
                                                "eval_dataset",
                                                "dataset_dir",
                                                "template",
                                                "max_samples",
                                                "overwrite_cache",
                                                "preprocessing_num_workers",
                                                "output_dir",
                                                "logging_steps",
                                                "save_steps",
                                                "plot_loss",
                                                "overwrite_output_dir",
                                                "gradient_accumulation_steps",
                                                "learning_rate",
                                                "num_train_epochs",
                                                "lr_scheduler_type",
                                                "warmup_ratio",
                                                "warmup_steps",
                                                "ddp_timeout",
                                                "val_size",
                                                "per_device_eval_batch_size",
                                                "eval_strategy",
                                                "evaluation_strategy",
                                                "eval_steps",
                                                "trust_remote_code",
                                                "pref_beta",
                                                "report_to",
                                                "save_only_model",
                                                "weight_decay",
                                                "max_grad_norm",
                                                "dataloader_num_workers",
                                                "run_name",
                                                "seed",
                                                "lora_alpha",
                                                "save_strategy",
                                                "resume_from_checkpoint",
                                                "max_steps",
                                                "logging_dir",
                                                "save_total_limit",
                                                "push_to_hub",
                                                "hub_model_id",
                                                "tokenized_path",
                                                "streaming",
                                                "buffer_size",
                                                "mix_strategy",
                                                "interleave_probs",
                                                "quantization_type",
                                                "use_rslora",
                                                "include_mfu",
                                                "mfu_profile_every",
                                                "mfu_warmup_steps",
                                                "rope_scaling"};
  return kKeys;
}

}  // namespace

// LLaMA-Factory: llamafactory/hparams/{model,data,finetuning,training}_args.py.
void ReadLlamaFactory(Reader& r, const RunConfigContext& context) {
  if (auto base = r.Text("model_name_or_path")) {
    ResolveBaseModel(*base, "model_name_or_path", context, r);
  } else {
    r.out().model_error = MsgFrom("{}: {}", r.file(), Msg("model_name_or_path: not given"));
  }
  const std::string stage = AsciiLower(r.Text("stage").value_or("sft"));
  if (stage == "dpo") {
    const std::string pref = AsciiLower(r.Text("pref_loss").value_or("sigmoid"));
    r.Set("workload", "dpo");
    if (pref == "orpo" || pref == "simpo") r.NotModelled("pref_loss: " + pref);
  } else if (stage != "sft" && stage != "pt") {
    r.NotModelled("stage: " + stage);
  }
  // finetuning_type defaults to lora (finetuning_args.py).
  const std::string type = AsciiLower(r.Text("finetuning_type").value_or("lora"));
  const std::optional<int64_t> bits = r.Int("quantization_bit");
  if (type == "lora") {
    if (bits == 4) {
      r.Set("method", "qlora");
      r.Set("double_quant", r.Bool("double_quantization").value_or(true) ? "on" : "off");
    } else if (bits == 8) {
      r.Set("method", "qlora");
      r.Set("weight_dtype", "int8");
    } else {
      r.Set("method", "lora");
      if (bits) r.NotModelled(fmt::format("quantization_bit: {}", *bits));
    }
    const std::string qm = AsciiLower(r.Text("quantization_method").value_or("bitsandbytes"));
    if (bits && qm != "bitsandbytes" && qm != "bnb") r.NotModelled("quantization_method: " + qm);
    // lora_rank 8 and lora_target "all" by default (finetuning_args.py); lora_dropout's
    // default is the stack's profile's (plan/framework_profile.cc, the same file).
    r.Set("lora_rank", std::to_string(r.Count("lora_rank").value_or(8)));
    r.Set("lora_dropout",
          fmt::format(
              "{:g}",
              r.Number("lora_dropout").value_or(ProfileOf(Framework::kLlamaFactory).lora_dropout)));
    SetLoraTargets(r, "lora_target",
                   r.TextList("lora_target").value_or(std::vector<std::string>{"all"}));
  } else {
    r.Set("method", "full");
    if (type != "full") r.NotModelled("finetuning_type: " + type);
    if (bits) r.NotModelled(fmt::format("quantization_bit: {}", *bits));
  }
  // per_device_train_batch_size is TrainingArguments' (8 by default); cutoff_len 2048.
  ReadTrainerBatch(r);
  r.Set("seq", std::to_string(r.Count("cutoff_len").value_or(2048)));
  r.Skip({"packing", "neat_packing"});
  // Gradient checkpointing as the profile has it unless disabled (on: the profile cites
  // model/model_utils/checkpointing.py).
  const bool ckpt = ProfileOf(Framework::kLlamaFactory).grad_ckpt;
  r.Set("grad_ckpt", r.Bool("disable_gradient_checkpointing").value_or(!ckpt) ? "off" : "on");
  r.Skip({"gradient_checkpointing"});
  if (auto opt = r.Text("optim")) SetHfOptimizer(r, "optim", *opt);
  if (auto attn = r.Text("flash_attn")) {
    const std::string a = AsciiLower(*attn);
    if (a == "disabled" || a == "eager") {
      r.Set("attention", "eager");
    } else if (a == "fa2") {
      r.Set("attention", "flash");
    } else {
      r.Set("attention", "sdpa");
    }
  }
  // Liger (model/model_utils/liger_kernel.py) and cut cross entropy leave no logits behind.
  const bool liger = r.Bool("enable_liger_kernel").value_or(false);
  const bool cce = r.Bool("use_cce").value_or(false);  // both read: each marks its key seen
  if (liger || cce) r.Set("loss", "fused");
  if (auto ds = r.Text("deepspeed")) ReadDeepSpeed(r, *ds, context);
  r.Skip({"bf16", "fp16", "double_quantization"});
  r.ListRest(LlamaFactorySilentKeys());
}

}  // namespace headroom::run_config_detail
