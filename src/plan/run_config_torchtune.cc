// Implementation notes: torchtune's recipe configs (pytorch/torchtune recipes/configs/), read
// into plan's flag text: the model builder names the method and the model, the components
// (`_component_`) name the optimizer and the loss. The shared helpers are in
// run_config_formats.cc; the table of keys is in docs/plan.md ("Plan from the run's config").
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
#include "plan/run_config_reader.h"

namespace headroom::run_config_detail {

namespace {

// torchtune's builder names ("llama3_1_8b", "qwen2_5_7b") to catalog names: the family's
// letters, its version (underscores between digits are dots), the size.
const ModelSpec* TorchtuneCatalogModel(std::string_view builder) {
  std::vector<std::string> parts;
  for (size_t start = 0; start <= builder.size();) {
    const size_t end = std::min(builder.find('_', start), builder.size());
    parts.emplace_back(builder.substr(start, end - start));
    start = end + 1;
  }
  if (parts.size() < 2) return FindModel(builder);
  const std::string& head = parts.front();
  const size_t digit = head.find_first_of("0123456789");
  std::string version = digit == std::string::npos ? "" : head.substr(digit);
  for (size_t i = 1; i + 1 < parts.size(); ++i) version += "." + parts[i];
  const std::string family = head.substr(0, digit);
  const std::string size = parts.back();
  for (const std::string& name :
       {family + "-" + version + "-" + size, family + version + "-" + size, family + "-" + size}) {
    if (const ModelSpec* spec = FindModel(name)) return spec;
  }
  return nullptr;
}

}  // namespace

namespace {

// The keys of this format that leave peak memory alone, skipped without a word.
const std::set<std::string_view>& TorchtuneSilentKeys() {
  static const std::set<std::string_view> kKeys{"tokenizer",
                                                "checkpointer",
                                                "dataset",
                                                "seed",
                                                "shuffle",
                                                "lr_scheduler",
                                                "epochs",
                                                "max_steps_per_epoch",
                                                "gradient_accumulation_steps",
                                                "output_dir",
                                                "metric_logger",
                                                "log_every_n_steps",
                                                "log_peak_memory_stats",
                                                "log_level",
                                                "device",
                                                "profiler",
                                                "resume_from_checkpoint",
                                                "save_adapter_weights_only",
                                                "clip_grad_norm",
                                                "dtype",
                                                "batch_size_val",
                                                "run_val_every_n_steps",
                                                "dataset_val",
                                                "name",
                                                "base_model_path",
                                                "top_k",
                                                "temperature",
                                                "num_steps",
                                                "save_every_n_epochs",
                                                "samples_per_validation_steps"};
  return kKeys;
}

}  // namespace

// torchtune: recipes/configs/*, the builders in torchtune/models/*/_model_builders.py.
void ReadTorchtune(Reader& r, const RunConfigContext& context) {
  const std::string component = r.Text("model._component_").value_or("");
  std::string builder = component.substr(component.rfind('.') + 1);
  if (builder.starts_with("qlora_") || r.Bool("model.quantize_base").value_or(false)) {
    r.Set("method", "qlora");
  } else if (builder.starts_with("lora_")) {
    r.Set("method", "lora");
  } else {
    r.Set("method", "full");
  }
  const bool lora = builder.starts_with("lora_") || builder.starts_with("qlora_");
  if (lora) builder = builder.substr(builder.find('_') + 1);
  // The model: the checkpoint folder when it holds config.json (the exact model), else the
  // builder's name in the catalog.
  std::string dir = r.Text("checkpointer.checkpoint_dir").value_or("");
  // OmegaConf's interpolation, one level: "${base_model_path}" or "${output_dir}/ref" from a
  // top-level scalar (torchtune/config/_parse.py loads configs through OmegaConf).
  if (dir.starts_with("${")) {
    const size_t close = dir.find('}');
    const YamlNode* var =
        close == std::string::npos ? nullptr : r.Root().Find(dir.substr(2, close - 2));
    if (var && var->kind == YamlNode::Kind::kScalar) dir = var->scalar + dir.substr(close + 1);
  }
  std::error_code ec;
  if (!dir.empty() &&
      std::filesystem::is_regular_file(std::filesystem::path(dir) / "config.json", ec)) {
    ResolveBaseModel(dir, "checkpointer.checkpoint_dir", context, r);
  } else if (const ModelSpec* spec = TorchtuneCatalogModel(builder)) {
    r.out().base_model = component;
    r.out().model_origin = "catalog";
    r.Set("model", spec->name);
  } else {
    r.out().base_model = component;
    r.out().model_error = MsgFrom(
        "{}: {}", r.file(),
        Msg("model._component_: '{}' is no catalog model and checkpointer.checkpoint_dir '{}' "
            "holds no config.json; give a catalog name or --config beside --from",
            component, dir));
  }
  if (lora) {
    if (auto rank = r.Count("model.lora_rank")) r.Set("lora_rank", std::to_string(*rank));
    if (auto dropout = r.Number("model.lora_dropout")) {
      r.Set("lora_dropout", fmt::format("{:g}", *dropout));
    }
    std::vector<std::string> targets =
        r.TextList("model.lora_attn_modules").value_or(std::vector<std::string>{});
    // apply_lora_to_mlp adds w1, w2, w3 (gate, down, up).
    if (r.Bool("model.apply_lora_to_mlp").value_or(false)) {
      targets.insert(targets.end(), {"gate", "up", "down"});
    }
    if (!targets.empty()) SetLoraTargets(r, "model.lora_attn_modules", targets);
    if (r.Bool("model.apply_lora_to_output").value_or(false)) {
      r.NotModelled("model.apply_lora_to_output");
    }
    r.Skip({"model.lora_alpha", "model.quantize_base"});
  }
  if (auto batch = r.Count("batch_size")) r.Set("batch", std::to_string(*batch));
  if (auto seq = r.Count("tokenizer.max_seq_len")) {
    r.Set("seq", std::to_string(*seq));
  } else {
    r.NotModelled("tokenizer.max_seq_len: null (sample lengths are the dataset's)");
  }
  r.Skip({"dataset.packed"});
  // Recipes read enable_activation_checkpointing with a default of False.
  r.Set("grad_ckpt", r.Bool("enable_activation_checkpointing").value_or(false) ? "on" : "off");
  const std::string opt = r.Text("optimizer._component_").value_or("");
  if (!opt.empty()) {
    const std::string o = AsciiLower(opt);
    if (Contains(o, "8bit")) {
      r.Set("optimizer", "adamw-8bit");
    } else if (o.ends_with(".adamw") || o.ends_with(".pagedadamw")) {
      r.Set("optimizer", "adamw");
      if (r.Bool("optimizer.fused").value_or(false)) r.Set("optimizer_step", "fused");
    } else if (o.ends_with(".sgd")) {
      r.Set("optimizer", "sgd");
    } else {
      r.NotModelled("optimizer: " + opt);
    }
  }
  r.Skip({"loss.kl_coeff", "optimizer.fused", "optimizer.lr", "optimizer.weight_decay",
          "optimizer.betas", "optimizer.eps"});
  const std::string loss = r.Text("loss._component_").value_or("");
  if (Contains(loss, "CEWithChunkedOutputLoss")) {
    r.Set("loss", "chunked");
  } else if (Contains(loss, "LinearCrossEntropyLoss")) {
    r.Set("loss", "fused");
  } else if (Contains(loss, "DPOLoss") || Contains(loss, "RSOLoss")) {
    r.Set("workload", "dpo");
  } else if (Contains(AsciiLower(loss), "grpo")) {
    r.Set("workload", "grpo");
  } else if (Contains(loss, "CrossEntropyLoss")) {
    r.Set("loss", "standard");
  } else if (!loss.empty()) {
    r.NotModelled("loss: " + loss);
  }
  if (auto dtype = r.Text("dtype");
      dtype == "fp32" && !r.out().Sets("weight_dtype") && r.out().text.method != "qlora") {
    r.Set("weight_dtype", "fp32");
  }
  // The distributed recipes shard with FSDP2; these keys are theirs.
  if (r.Node("fsdp_cpu_offload") || r.Node("fsdp_reshard_after_forward")) {
    r.Set("sharding", "fsdp");
    if (r.Bool("fsdp_cpu_offload").value_or(false)) r.NotModelled("fsdp_cpu_offload");
  }
  r.Skip({"fsdp_reshard_after_forward"});
  r.ListRest(TorchtuneSilentKeys(), {"model", "optimizer", "loss"});
}

}  // namespace headroom::run_config_detail
