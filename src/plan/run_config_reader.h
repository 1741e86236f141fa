// Inside plan/run_config: the typed reading of a run configuration's tree that the four
// formats' readers share (plan/run_config_formats.cc). Not for other modules.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/message.h"
#include "base/yaml_tree.h"
#include "plan/run_config.h"

namespace headroom::run_config_detail {

// Thrown inside the readers, caught in ReadRunConfig: never leaves plan/run_config.
struct Failure {
  Message message;
};

// One file being read. Every getter marks its key seen; a value of the wrong type throws a
// Failure naming the file and the key. A key whose value is null reads as absent.
class Reader {
 public:
  Reader(const YamlNode& root, std::string_view file, RunConfig* out)
      : root_(root), file_(file), out_(out) {}

  // `path` is "key" or "section.key" (one level down).
  const YamlNode* Node(std::string_view path);
  std::optional<int64_t> Int(std::string_view path);
  // An integer above 0 (a batch, a length, a rank).
  std::optional<int64_t> Count(std::string_view path);
  std::optional<double> Number(std::string_view path);
  std::optional<bool> Bool(std::string_view path);
  std::optional<std::string> Text(std::string_view path);
  // A sequence of scalars, or one scalar split at commas (and blanks).
  std::optional<std::vector<std::string>> TextList(std::string_view path);
  // Marks keys seen without reading them.
  void Skip(std::initializer_list<std::string_view> paths);

  // Sets a field a run configuration can set (plan/plan_fields, run_config), by its name.
  void Set(std::string_view field, std::string value);
  void NotModelled(std::string key);

  // The top-level keys not seen yet and not in `ignored`, whose value is not null, false or
  // empty, added to not_modelled; sections in `sections` are walked one level down the same
  // way ("optimizer.momentum").
  void ListRest(const std::set<std::string_view>& ignored,
                const std::set<std::string_view>& sections = {});

  [[noreturn]] void Fail(const Message& what, std::string_view path);
  std::string_view file() const { return file_; }
  const YamlNode& Root() const { return root_; }
  RunConfig& out() { return *out_; }

 private:
  const YamlNode& root_;
  std::string_view file_;
  RunConfig* out_;
  std::set<std::string> seen_;
  std::set<std::string> listed_;  // what NotModelled added
};

// Model names: the base model as the file names it resolved to --config or a catalog name
// (run_config.cc). Unresolved, `out.model_error` says why, for the CLI to report unless the
// command line names the model itself.
void ResolveBaseModel(const std::string& name, std::string_view key,
                      const RunConfigContext& context, Reader& reader);

// Helpers the readers share (run_config_formats.cc).
bool Contains(std::string_view s, std::string_view part);
std::string Join(const std::vector<std::string>& items, std::string_view sep);
// transformers' optimizer names (axolotl and LLaMA-Factory take the same) to the plan's
// optimizer and step; false, and `key: name` listed, for one the planner does not model.
bool SetHfOptimizer(Reader& r, const std::string& key, const std::string& name);
// LoRA target names to --lora-targets; names it does not know are listed.
void SetLoraTargets(Reader& r, const std::string& key, const std::vector<std::string>& names);
// transformers' attn_implementation to --attention.
void SetAttention(Reader& r, const std::string& key, const std::string& name);
// FSDP's options ("full_shard auto_wrap", a list) to --sharding.
void SetFsdp(Reader& r, const std::vector<std::string>& options);
// fsdp_config's sharding strategy and offloads.
void ReadFsdpConfig(Reader& r);
// TrainingArguments' per_device_train_batch_size (8) and a larger evaluation batch.
void ReadTrainerBatch(Reader& r);

// The five readers: axolotl and LLaMA-Factory (run_config_formats.cc), torchtune
// (run_config_torchtune.cc), TRL / transformers and Firefly (run_config_trl.cc).
void ReadAxolotl(Reader& r, const RunConfigContext& context);
void ReadLlamaFactory(Reader& r, const RunConfigContext& context);
void ReadTorchtune(Reader& r, const RunConfigContext& context);
void ReadTrl(Reader& r, const RunConfigContext& context);
void ReadFirefly(Reader& r, const RunConfigContext& context);

// A DeepSpeed config named by a `deepspeed` key: its ZeRO stage to `sharding`, offloads to
// not_modelled. A path that is not there is judged by its name ("ds_z3_config.json").
void ReadDeepSpeed(Reader& r, const std::string& path, const RunConfigContext& context);

}  // namespace headroom::run_config_detail
