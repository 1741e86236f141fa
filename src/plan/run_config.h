// A training run's own configuration file turned into plan's flag text (`plan --from FILE`,
// docs/plan.md "Plan from the run's config"): axolotl YAML, LLaMA-Factory YAML, torchtune
// YAML, TRL / transformers training arguments as YAML or JSON (`trl sft --config`, the
// alignment-handbook recipes), and Firefly's train_args JSON.
//
//   file bytes -- ParseYaml (base/yaml_tree) --> tree -- DetectRunFormat --> format
//              -- ReadRunConfig --> RunConfig { PlanFlagText fields set, keys not modelled }
//
// The reader sets only the fields the file decides (what the file says, or what that stack
// does when the file is silent, e.g. TrainingArguments' per_device_train_batch_size of 8);
// `set` names them, so the CLI can lay the command line's flags over the file. Keys that
// change memory and that the planner does not model are listed in `not_modelled`, with the
// keys this reader does not know: nothing memory-relevant is dropped without a word. Keys
// known to leave memory alone (learning rates, logging, datasets, output folders) are
// skipped silently; docs/plan.md has the table.
//
// Errors are message values naming the file and the key ("run.yaml: micro_batch_size:
// expected an integer, got a sequence"); nothing here translates or prints.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/message.h"
#include "base/result.h"
#include "base/yaml_tree.h"
#include "plan/plan_request.h"

namespace headroom {

enum class RunFormat { kAxolotl, kLlamaFactory, kTorchtune, kTrl, kFirefly };
// "axolotl", "llama-factory", "torchtune", "trl": also the --framework names (issue 17);
// "firefly", whose reader names the framework it runs (hf, or unsloth with use_unsloth).
std::string_view Name(RunFormat f);

// Files past this are refused before any parsing: real run configs are 0.3-5 KB.
inline constexpr size_t kMaxRunConfigBytes = size_t{1} << 20;  // 1 MiB

// Where a base model named by a Hugging Face id may already be on disk. The CLI fills it from
// HF_HUB_CACHE, HF_HOME (+ /hub) and ~/.cache/huggingface/hub; the library reads no environment.
struct RunConfigContext {
  std::vector<std::filesystem::path> hf_cache_dirs;
  std::filesystem::path config_dir;  // the file's folder: relative DeepSpeed paths start here
};

struct RunConfig {
  RunFormat format = RunFormat::kTrl;
  std::string base_model;        // as the file names it ("NousResearch/Meta-Llama-3-8B")
  std::string model_origin;      // "catalog", "local folder", "hf cache"
  PlanFlagText text;             // the fields in `set` hold the file's values
  std::vector<std::string> set;  // the fields set (plan/plan_fields' names): "model", "batch"
  std::vector<std::string> not_modelled;  // keys as written ("fsdp_config.fsdp_offload_params")
  // Why the base model was not found, when it was not (the CLI reports it unless the
  // command line names the model itself).
  std::optional<Message> model_error;

  bool Sets(std::string_view field) const;
};

// Which stack's file this is, by the keys only that stack uses; nullopt when none fits
// (`*error` then lists what was looked for).
std::optional<RunFormat> DetectRunFormat(const YamlNode& root, Message* error);

// The tree read as `format`'s configuration. `file` is the name errors start with.
Result<RunConfig> ReadRunConfig(const YamlNode& root, RunFormat format, std::string_view file,
                                const RunConfigContext& context);

// Text to RunConfig: parse (size already checked by the caller), detect, read.
Result<RunConfig> ParseRunConfig(std::string_view text, std::string_view file,
                                 const RunConfigContext& context);

// The file at `path` read (base/safe_file's OpenInput: a regular file only, at most
// kMaxRunConfigBytes) and parsed.
Result<RunConfig> LoadRunConfig(const std::string& path, const RunConfigContext& context);

// Where a Hugging Face id is in the caches: <dir>/models--ORG--NAME/snapshots/<rev>/ holding
// a config.json (the revision refs/main names, else the first by name). nullopt when absent.
std::optional<std::filesystem::path> FindInHfCache(std::string_view hf_id,
                                                   const std::vector<std::filesystem::path>& dirs);

// The JSON the plan output carries for it: {"file": ..., "format": ..., "base_model": ...,
// "model_origin": ..., "not_modelled": [...]}.
nlohmann::json RunConfigToJson(const RunConfig& config, std::string_view file);

// "from FILE (axolotl): not modelled: a, b": the note that `ladder start`, `report
// --plan-args` and `doctor --workload` show beside a plan read from words with --from in
// them, so no key is dropped unseen; nullopt when the file had no key that is not modelled.
std::optional<Message> NotModelledNote(const RunConfig& config, std::string_view file);

}  // namespace headroom
