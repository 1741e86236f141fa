// Implementation notes: TRL's and transformers' training arguments (`trl sft --config`, the
// alignment-handbook and open-r1 recipes), and Firefly's train_args JSON (TrainingArguments
// with Firefly's own keys beside them), read into plan's flag text. The trainer kind is
// told by the keys only its config has (beta: DPO; num_generations: GRPO). The shared helpers
// are in run_config_formats.cc; the table of keys is in docs/plan.md.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "base/text.h"
#include "model/catalog.h"
#include "plan/framework_profile.h"
#include "plan/run_config_reader.h"

namespace headroom::run_config_detail {

namespace {

// The keys of this format that leave peak memory alone, skipped without a word.
const std::set<std::string_view>& TrlSilentKeys() {
  static const std::set<std::string_view> kKeys{"dataset_name",
                                                "dataset_config",
                                                "dataset_mixer",
                                                "dataset_splits",
                                                "dataset_train_split",
                                                "dataset_test_split",
                                                "dataset_text_field",
                                                "dataset_num_proc",
                                                "dataset_kwargs",
                                                "output_dir",
                                                "learning_rate",
                                                "lr_scheduler_type",
                                                "lr_scheduler_kwargs",
                                                "num_train_epochs",
                                                "max_steps",
                                                "logging_steps",
                                                "logging_strategy",
                                                "logging_first_step",
                                                "log_level",
                                                "save_strategy",
                                                "save_steps",
                                                "save_total_limit",
                                                "eval_strategy",
                                                "evaluation_strategy",
                                                "eval_steps",
                                                "do_eval",
                                                "do_train",
                                                "hub_model_id",
                                                "hub_strategy",
                                                "hub_private_repo",
                                                "push_to_hub",
                                                "report_to",
                                                "seed",
                                                "warmup_ratio",
                                                "warmup_steps",
                                                "gradient_accumulation_steps",
                                                "chat_template",
                                                "preprocessing_num_workers",
                                                "model_revision",
                                                "overwrite_output_dir",
                                                "lora_alpha",
                                                "weight_decay",
                                                "max_grad_norm",
                                                "run_name",
                                                "remove_unused_columns",
                                                "trust_remote_code",
                                                "ddp_timeout",
                                                "per_device_eval_batch_size",
                                                "env",
                                                "use_rslora",
                                                "lora_task_type",
                                                "completion_only_loss",
                                                "assistant_only_loss",
                                                "truncation_mode",
                                                "eos_token",
                                                "pad_token",
                                                "shuffle_dataset",
                                                "eval_packing",
                                                "temperature",
                                                "epsilon",
                                                "num_iterations",
                                                "scale_rewards",
                                                "log_completions",
                                                "data_seed",
                                                "optim_args",
                                                "dataset_configs",
                                                "system_prompt",
                                                "disable_tqdm"};
  return kKeys;
}

}  // namespace

// TRL / transformers: trl/trainer/{sft,dpo,grpo}_config.py, trl/trainer/model_config.py
// (ModelConfig: use_peft, lora_*, load_in_*bit) and transformers' TrainingArguments.
void ReadTrl(Reader& r, const RunConfigContext& context) {
  if (auto base = r.Text("model_name_or_path")) {
    ResolveBaseModel(*base, "model_name_or_path", context, r);
  } else {
    r.out().model_error = MsgFrom("{}: {}", r.file(), Msg("model_name_or_path: not given"));
  }
  const bool peft = r.Bool("use_peft").value_or(false);
  const bool four = r.Bool("load_in_4bit").value_or(false);
  const bool eight = r.Bool("load_in_8bit").value_or(false);
  if (peft) {
    r.Set("method", four || eight ? "qlora" : "lora");
    if (eight && !four) r.Set("weight_dtype", "int8");
    // ModelConfig: lora_r 16, lora_dropout 0.05, use_bnb_nested_quant False; targets None,
    // which PEFT turns into the model type's default, q_proj and v_proj for the Llama,
    // Mistral and Qwen families (peft/utils/constants.py).
    r.Set("lora_rank", std::to_string(r.Count("lora_r").value_or(16)));
    r.Set("lora_dropout", fmt::format("{:g}", r.Number("lora_dropout").value_or(0.05)));
    SetLoraTargets(r, "lora_target_modules",
                   r.TextList("lora_target_modules").value_or(std::vector<std::string>{"q", "v"}));
    if (four) r.Set("double_quant", r.Bool("use_bnb_nested_quant").value_or(false) ? "on" : "off");
  } else {
    r.Set("method", "full");
    if (four || eight) r.NotModelled(four ? "load_in_4bit" : "load_in_8bit");
  }
  for (const char* key : {"torch_dtype", "dtype"}) {
    const std::string d = AsciiLower(r.Text(key).value_or(""));
    if ((d == "float32" || d == "fp32") && !(four || eight)) r.Set("weight_dtype", "fp32");
  }
  if (auto attn = r.Text("attn_implementation")) SetAttention(r, "attn_implementation", *attn);
  // TrainingArguments' per_device_train_batch_size is 8.
  ReadTrainerBatch(r);
  // What the trainer kind is, by the keys only that config has.
  const bool grpo = r.Node("num_generations") || r.Node("max_completion_length") ||
                    r.Node("use_vllm") || r.Node("reward_funcs");
  const bool dpo = !grpo && (r.Node("beta") || r.Node("max_prompt_length"));
  std::optional<int64_t> seq = r.Count("max_length");
  if (const auto old = r.Count("max_seq_length"); old && !seq) seq = old;  // SFTConfig before 0.20
  if (grpo) {
    r.Set("workload", "grpo");
    // A rollout is a prompt and its completion: GRPOConfig's 512 + 256 by default.
    seq =
        r.Count("max_prompt_length").value_or(512) + r.Count("max_completion_length").value_or(256);
    if (auto util = r.Number("vllm_gpu_memory_utilization")) {
      r.Set("rollout_fraction", fmt::format("{:g}", *util));
    }
  } else if (dpo) {
    r.Set("workload", "dpo");
    r.Skip({"max_prompt_length"});
  }
  // SFTConfig's and DPOConfig's max_length is 1024.
  r.Set("seq", std::to_string(seq.value_or(1024)));
  r.Skip({"packing", "packing_strategy", "padding_free"});
  // TRL's configs turn gradient checkpointing on by default: the trl profile's value
  // (plan/framework_profile.cc, from sft_config.py).
  const bool ckpt = ProfileOf(Framework::kTrl).grad_ckpt;
  r.Set("grad_ckpt", r.Bool("gradient_checkpointing").value_or(ckpt) ? "on" : "off");
  if (auto opt = r.Text("optim")) SetHfOptimizer(r, "optim", *opt);
  const bool liger = r.Bool("use_liger_kernel").value_or(false);
  const bool liger_old = r.Bool("use_liger").value_or(false);  // TRL before 0.13
  if (liger || liger_old) {
    r.Set("loss", "fused");
  } else if (auto loss = r.Text("loss_type"); loss && !dpo && !grpo) {
    if (*loss == "nll") {
      r.Set("loss", "standard");
    } else if (*loss == "chunked_nll") {
      r.Set("loss", "chunked");
    } else {
      r.NotModelled("loss_type: " + *loss);
    }
  }
  const YamlNode* ds = r.Node("deepspeed");
  if (ds && ds->kind == YamlNode::Kind::kScalar) {
    ReadDeepSpeed(r, ds->scalar, context);
  } else if (ds) {
    r.NotModelled("deepspeed");
  }
  if (auto fsdp = r.TextList("fsdp")) SetFsdp(r, *fsdp);
  ReadFsdpConfig(r);
  r.Skip({"bf16", "fp16", "tf32", "gradient_checkpointing_kwargs", "use_bnb_nested_quant",
          "loss_type", "beta", "num_generations", "max_completion_length", "use_vllm",
          "reward_funcs"});
  r.ListRest(TrlSilentKeys(), {"fsdp_config"});
}

// Firefly (yangjianxin1/Firefly): train.py parses one JSON into its CustomizedArguments and
// transformers' TrainingArguments (component/argument.py, train.py at c561b25). Its own keys
// choose what is trained: train_mode "qlora" by default (also "lora", "full"), lora_rank 64,
// lora_dropout 0.05, every linear layer but lm_head adapted (find_all_linear_names), a QLoRA's
// base in NF4 with double quantization (load_model's BitsAndBytesConfig), task_type "sft" by
// default ("pretrain", "dpo"), and use_unsloth (Unsloth's FastLanguageModel, whose
// get_peft_model turns gradient checkpointing on).
void ReadFirefly(Reader& r, const RunConfigContext& context) {
  if (auto base = r.Text("model_name_or_path")) {
    ResolveBaseModel(*base, "model_name_or_path", context, r);
  } else {
    r.out().model_error = MsgFrom("{}: {}", r.file(), Msg("model_name_or_path: not given"));
  }
  const std::string mode = r.Text("train_mode").value_or("qlora");
  if (mode != "full" && mode != "lora" && mode != "qlora") {
    r.Fail(Msg("'{}' is not one of full, lora, qlora (Firefly's train.py asserts it)", mode),
           "train_mode");
  }
  const bool unsloth = r.Bool("use_unsloth").value_or(false);
  r.Set("framework", unsloth ? "unsloth" : "hf");
  r.Set("method", mode);
  if (mode != "full") {
    r.Set("lora_rank", std::to_string(r.Count("lora_rank").value_or(64)));
    r.Set("lora_dropout", fmt::format("{:g}", r.Number("lora_dropout").value_or(0.05)));
    r.Set("lora_targets", "all");
    if (mode == "qlora") r.Set("double_quant", "on");
  }
  r.Skip({"lora_rank", "lora_alpha", "lora_dropout"});
  const std::string task = r.Text("task_type").value_or("sft");
  if (task == "dpo") {
    r.Set("workload", "dpo");
  } else if (task != "sft" && task != "pretrain") {
    r.NotModelled("task_type: " + task);
  }
  ReadTrainerBatch(r);
  // max_seq_length has no default in CustomizedArguments: HfArgumentParser requires it.
  if (auto seq = r.Count("max_seq_length")) {
    r.Set("seq", std::to_string(*seq));
  } else {
    r.Fail(Msg("not given (Firefly requires it)"), "max_seq_length");
  }
  // TrainingArguments' gradient_checkpointing is off by default; Unsloth's LoRA turns it on.
  const bool ckpt = r.Bool("gradient_checkpointing").value_or(false) || (unsloth && mode != "full");
  r.Set("grad_ckpt", ckpt ? "on" : "off");
  if (auto opt = r.Text("optim")) SetHfOptimizer(r, "optim", *opt);
  const YamlNode* ds = r.Node("deepspeed");
  if (ds && ds->kind == YamlNode::Kind::kScalar) {
    ReadDeepSpeed(r, ds->scalar, context);
  } else if (ds) {
    r.NotModelled("deepspeed");
  }
  // Keys of Firefly's that leave peak memory alone: the data and its template, DPO's beta and
  // prompt length (the sequence is max_seq_length), the tokenizer's worker count.
  r.Skip({"bf16", "fp16", "tf32", "train_file", "eval_file", "template_name", "beta",
          "max_prompt_length", "tokenize_num_workers", "gradient_checkpointing_kwargs"});
  r.ListRest(TrlSilentKeys());
}

}  // namespace headroom::run_config_detail
