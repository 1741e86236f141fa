// Implementation notes: the front end (size cap, parse with bounds, format detection), the
// typed getters every reader uses, the base model's resolution and the DeepSpeed file. The
// readers of each format are in run_config_formats.cc. A reader throws a Failure naming the
// file and the key; ReadRunConfig catches it, so no exception leaves the module.
//
// The base model, in this order: a local folder holding config.json (the exact model); a
// Hugging Face id already in the cache's snapshots (the exact model, offline); a catalog name
// (model/catalog's lookup drops "org/" and variant suffixes). A folder is what the run itself
// would load first, and the cache is what `from_pretrained` would find next.
#include "plan/run_config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <system_error>

#include "base/safe_file.h"
#include "base/text.h"
#include "model/catalog.h"
#include "plan/plan_fields.h"
#include "plan/run_config_reader.h"

namespace headroom {

using run_config_detail::Failure;
using run_config_detail::Reader;

namespace run_config_detail {
namespace {

bool Truthy(const YamlNode& n) {
  if (n.IsNull()) return false;
  if (n.kind == YamlNode::Kind::kScalar && !n.quoted) {
    const std::string v = AsciiLower(n.scalar);
    if (v == "false" || v == "no" || v == "off") return false;
  }
  if (n.kind == YamlNode::Kind::kSequence) return !n.items.empty();
  if (n.kind == YamlNode::Kind::kMap) return !n.members.empty();
  return true;
}

bool ParseInt(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  size_t i = s[0] == '+' || s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] == '_') continue;  // YAML 1.1 allows 1_000
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = s[0] == '-' ? -v : v;
  return true;
}

}  // namespace

const YamlNode* Reader::Node(std::string_view path) {
  seen_.emplace(path);
  const size_t dot = path.find('.');
  const YamlNode* n = root_.Find(path.substr(0, dot));
  if (n && dot != std::string_view::npos) {
    if (n->IsNull()) return nullptr;
    if (n->kind != YamlNode::Kind::kMap) {
      Fail(Msg("expected a mapping, got {}", KindName(n->kind)), path.substr(0, dot));
    }
    n = n->Find(path.substr(dot + 1));
  }
  if (!n || n->IsNull()) return nullptr;
  return n;
}

void Reader::Fail(const Message& what, std::string_view path) {
  throw Failure{MsgFrom("{}: {}: {}", file_, path, what)};
}

std::optional<int64_t> Reader::Int(std::string_view path) {
  const YamlNode* n = Node(path);
  if (!n) return std::nullopt;
  if (n->kind != YamlNode::Kind::kScalar) {
    Fail(Msg("expected an integer, got {}", KindName(n->kind)), path);
  }
  int64_t v = 0;
  if (!ParseInt(n->scalar, &v)) Fail(Msg("expected an integer, got '{}'", n->scalar), path);
  return v;
}

std::optional<int64_t> Reader::Count(std::string_view path) {
  const std::optional<int64_t> v = Int(path);
  if (v && *v <= 0) Fail(Msg("expected a positive integer, got {}", *v), path);
  return v;
}

std::optional<double> Reader::Number(std::string_view path) {
  const YamlNode* n = Node(path);
  if (!n) return std::nullopt;
  if (n->kind != YamlNode::Kind::kScalar) {
    Fail(Msg("expected a number, got {}", KindName(n->kind)), path);
  }
  char* end = nullptr;
  const double d = std::strtod(n->scalar.c_str(), &end);
  if (n->scalar.empty() || end != n->scalar.c_str() + n->scalar.size() || !std::isfinite(d)) {
    Fail(Msg("expected a number, got '{}'", n->scalar), path);
  }
  return d;
}

std::optional<bool> Reader::Bool(std::string_view path) {
  const YamlNode* n = Node(path);
  if (!n) return std::nullopt;
  if (n->kind != YamlNode::Kind::kScalar) {
    Fail(Msg("expected true or false, got {}", KindName(n->kind)), path);
  }
  const std::string v = AsciiLower(n->scalar);
  if (v == "true" || v == "yes" || v == "on" || v == "1") return true;
  if (v == "false" || v == "no" || v == "off" || v == "0") return false;
  Fail(Msg("expected true or false, got '{}'", n->scalar), path);
}

std::optional<std::string> Reader::Text(std::string_view path) {
  const YamlNode* n = Node(path);
  if (!n) return std::nullopt;
  if (n->kind != YamlNode::Kind::kScalar) {
    Fail(Msg("expected a name, got {}", KindName(n->kind)), path);
  }
  return n->scalar;
}

std::optional<std::vector<std::string>> Reader::TextList(std::string_view path) {
  const YamlNode* n = Node(path);
  if (!n) return std::nullopt;
  std::vector<std::string> out;
  if (n->kind == YamlNode::Kind::kScalar) {
    std::string item;
    for (const char c : n->scalar + ",") {
      if (c == ',' || c == ' ') {
        if (!item.empty()) out.push_back(std::move(item));
        item.clear();
      } else {
        item += c;
      }
    }
    return out;
  }
  if (n->kind != YamlNode::Kind::kSequence) {
    Fail(Msg("expected a list of names, got {}", KindName(n->kind)), path);
  }
  for (const auto& item : n->items) {
    if (item.kind != YamlNode::Kind::kScalar) {
      Fail(Msg("expected a list of names, got {} in it", KindName(item.kind)), path);
    }
    out.push_back(item.scalar);
  }
  return out;
}

void Reader::Skip(std::initializer_list<std::string_view> paths) {
  for (const auto p : paths) seen_.emplace(p);
}

void Reader::Set(std::string_view field, std::string value) {
  const PlanField* f = FindPlanField(field);
  if (!f || !f->run_config) return;  // the table says which fields a file decides
  SetFieldText(out_->text, *f, std::move(value));
  if (!out_->Sets(field)) out_->set.emplace_back(field);
}

void Reader::NotModelled(std::string key) {
  // Looked up in a set, not the list: a linear search of the list was quadratic in the number
  // of unknown keys (docs/plan.md, "Bad files").
  if (listed_.insert(key).second) out_->not_modelled.push_back(std::move(key));
}

void Reader::ListRest(const std::set<std::string_view>& ignored,
                      const std::set<std::string_view>& sections) {
  for (const auto& [key, value] : root_.members) {
    if (ignored.count(key) || !Truthy(value)) continue;
    if (sections.count(key) && value.kind == YamlNode::Kind::kMap) {
      for (const auto& [sub, sub_value] : value.members) {
        const std::string path = key + "." + sub;
        if (sub == "_component_" || seen_.count(path) || !Truthy(sub_value)) continue;
        NotModelled(path);
      }
      continue;
    }
    if (seen_.count(key)) continue;
    NotModelled(key);
  }
}

void ResolveBaseModel(const std::string& name, std::string_view key,
                      const RunConfigContext& context, Reader& r) {
  RunConfig& out = r.out();
  out.base_model = name;
  std::error_code ec;
  const std::filesystem::path folder(name);
  if (std::filesystem::is_regular_file(folder / "config.json", ec)) {
    // Absolute: a ladder's journal keeps the request, and re-plans from another folder.
    const auto absolute = std::filesystem::absolute(folder, ec);
    r.Set("config", ec ? name : absolute.lexically_normal().string());
    out.model_origin = "local folder";
    return;
  }
  const bool looks_like_path = name.starts_with('/') || name.starts_with("./") ||
                               name.starts_with("../") || name.starts_with('~');
  if (looks_like_path) {
    out.model_error = MsgFrom("{}: {}: {}", r.file(), key,
                              Msg("'{}' is no model folder (no config.json in it)", name));
    return;
  }
  if (auto snapshot = FindInHfCache(name, context.hf_cache_dirs)) {
    r.Set("config", snapshot->string());
    out.model_origin = "hf cache";
    return;
  }
  if (const ModelSpec* spec = FindModel(name)) {
    r.Set("model", spec->name);
    out.model_origin = "catalog";
    return;
  }
  std::string dirs;
  for (const auto& d : context.hf_cache_dirs) dirs += (dirs.empty() ? "" : ", ") + d.string();
  out.model_error = MsgFrom(
      "{}: {}: {}", r.file(), key,
      Msg("'{}' is not in the catalog, not a local model folder and not in the Hugging Face "
          "cache ({}); give a catalog name or --config beside --from",
          name, dirs.empty() ? std::string("none") : dirs));
}

void ReadDeepSpeed(Reader& r, const std::string& path, const RunConfigContext& context) {
  std::error_code ec;
  std::filesystem::path found;
  for (const auto& candidate : {context.config_dir / path, std::filesystem::path(path)}) {
    if (std::filesystem::is_regular_file(candidate, ec)) {
      found = candidate;
      break;
    }
  }
  if (found.empty()) {
    // Not here (a path inside the framework's own tree): the stage from the name only.
    const std::string name = AsciiLower(std::filesystem::path(path).filename().string());
    const auto has = [&](std::string_view s) { return name.find(s) != std::string::npos; };
    if (has("z3") || has("zero3") || has("stage3")) {
      r.Set("sharding", "zero3");
    } else if (has("z2") || has("zero2") || has("stage2")) {
      r.Set("sharding", "zero2");
    } else if (has("z0") || has("zero0")) {
      r.Set("sharding", "ddp");
    } else {
      r.NotModelled("deepspeed");
    }
    if (has("offload")) r.NotModelled("deepspeed (offload)");
    return;
  }
  auto text = ReadInputFile(found.string(), kMaxRunConfigBytes);
  if (!text) r.Fail(text.error().what, "deepspeed");
  auto tree = ParseYaml(*text);
  if (!tree) throw Failure{MsgFrom("{}: {}", found.string(), tree.error().what)};
  RunConfig scratch;
  Reader ds(*tree, found.string(), &scratch);
  const std::optional<int64_t> stage = ds.Int("zero_optimization.stage");
  if (!stage || *stage == 0) {
    r.Set("sharding", "ddp");
  } else if (*stage == 1) {
    r.Set("sharding", "ddp");
    r.NotModelled("deepspeed: zero_optimization.stage 1");
  } else if (*stage == 2) {
    r.Set("sharding", "zero2");
  } else if (*stage == 3) {
    r.Set("sharding", "zero3");
  } else {
    ds.Fail(Msg("expected 0, 1, 2 or 3, got {}", *stage), "zero_optimization.stage");
  }
  for (const char* key : {"offload_optimizer", "offload_param"}) {
    const YamlNode* zero = tree->Find("zero_optimization");
    const YamlNode* offload = zero ? zero->Find(key) : nullptr;
    const YamlNode* device = offload ? offload->Find("device") : nullptr;
    if (device && device->kind == YamlNode::Kind::kScalar && device->scalar != "none") {
      r.NotModelled(std::string("deepspeed: zero_optimization.") + key);
    }
  }
}

}  // namespace run_config_detail

std::string_view Name(RunFormat f) {
  switch (f) {
    case RunFormat::kAxolotl:
      return "axolotl";
    case RunFormat::kLlamaFactory:
      return "llama-factory";
    case RunFormat::kTorchtune:
      return "torchtune";
    case RunFormat::kTrl:
      return "trl";
    case RunFormat::kFirefly:
      return "firefly";
  }
  return "?";
}

bool RunConfig::Sets(std::string_view field) const {
  return std::find(set.begin(), set.end(), field) != set.end();
}

std::optional<RunFormat> DetectRunFormat(const YamlNode& root, Message* error) {
  if (root.kind != YamlNode::Kind::kMap) {
    *error = Msg("expected a mapping of keys at the top, got {}", KindName(root.kind));
    return std::nullopt;
  }
  // torchtune: components named by _component_ (torchtune/config/_instantiate.py).
  for (const auto& [key, value] : root.members) {
    if (value.kind == YamlNode::Kind::kMap && value.Find("_component_")) {
      return RunFormat::kTorchtune;
    }
  }
  const auto has = [&](std::string_view k) { return root.Find(k) != nullptr; };
  // axolotl: base_model (axolotl/utils/schemas/model.py), micro_batch_size, sequence_len.
  if (has("base_model") || has("micro_batch_size") || has("sequence_len")) {
    return RunFormat::kAxolotl;
  }
  // LLaMA-Factory: stage and finetuning_type (llamafactory/hparams/finetuning_args.py),
  // cutoff_len and template (data_args.py).
  if (has("stage") || has("finetuning_type") || has("cutoff_len") || has("template")) {
    return RunFormat::kLlamaFactory;
  }
  // Firefly: TrainingArguments beside its CustomizedArguments, whose template_name, train_mode,
  // train_file and task_type no TRL config has (Firefly's component/argument.py).
  if ((has("model_name_or_path") || has("per_device_train_batch_size")) &&
      (has("template_name") || has("train_mode") || has("train_file") || has("task_type"))) {
    return RunFormat::kFirefly;
  }
  // TRL / transformers: ModelConfig's model_name_or_path, TrainingArguments' keys.
  if (has("model_name_or_path") || has("per_device_train_batch_size")) return RunFormat::kTrl;
  if (has("zero_optimization")) {
    *error = Msg("a DeepSpeed config, not a run configuration: give the file that names it");
    return std::nullopt;
  }
  *error =
      Msg("not a run configuration this reads: none of base_model (axolotl), stage or "
          "finetuning_type (LLaMA-Factory), a _component_ (torchtune), model_name_or_path "
          "(TRL / transformers)");
  return std::nullopt;
}

Result<RunConfig> ReadRunConfig(const YamlNode& root, RunFormat format, std::string_view file,
                                const RunConfigContext& context) {
  RunConfig out;
  out.format = format;
  try {
    Reader r(root, file, &out);
    r.Set("framework", std::string(Name(format)));
    switch (format) {
      case RunFormat::kAxolotl:
        ReadAxolotl(r, context);
        break;
      case RunFormat::kLlamaFactory:
        ReadLlamaFactory(r, context);
        break;
      case RunFormat::kTorchtune:
        ReadTorchtune(r, context);
        break;
      case RunFormat::kTrl:
        ReadTrl(r, context);
        break;
      case RunFormat::kFirefly:
        ReadFirefly(r, context);
        break;
    }
  } catch (const Failure& f) {
    return Error{f.message};
  }
  return out;
}

Result<RunConfig> ParseRunConfig(std::string_view text, std::string_view file,
                                 const RunConfigContext& context) {
  if (text.size() > kMaxRunConfigBytes) {
    return Error{MsgFrom("{}: {}", file,
                         Msg("larger than {} bytes; no run configuration is", kMaxRunConfigBytes))};
  }
  auto tree = ParseYaml(text);
  if (!tree) return Error{MsgFrom("{}: {}", file, tree.error().what)};
  Message error;
  const auto format = DetectRunFormat(*tree, &error);
  if (!format) return Error{MsgFrom("{}: {}", file, error)};
  return ReadRunConfig(*tree, *format, file, context);
}

Result<RunConfig> LoadRunConfig(const std::string& path, const RunConfigContext& context) {
  auto text = ReadInputFile(path, kMaxRunConfigBytes);
  if (!text) return text.error();
  RunConfigContext with_dir = context;
  if (with_dir.config_dir.empty()) with_dir.config_dir = std::filesystem::path(path).parent_path();
  return ParseRunConfig(*text, path, with_dir);
}

std::optional<std::filesystem::path> FindInHfCache(std::string_view hf_id,
                                                   const std::vector<std::filesystem::path>& dirs) {
  const size_t slash = hf_id.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == hf_id.size() ||
      hf_id.find('/', slash + 1) != std::string_view::npos || hf_id.find("..") != hf_id.npos) {
    return std::nullopt;  // an id is exactly ORG/NAME
  }
  // huggingface_hub's cache layout (file_download.py, repo_folder_name): models--ORG--NAME.
  const std::string folder = "models--" + std::string(hf_id.substr(0, slash)) + "--" +
                             std::string(hf_id.substr(slash + 1));
  std::error_code ec;
  for (const auto& dir : dirs) {
    const auto repo = dir / folder;
    if (!std::filesystem::is_directory(repo / "snapshots", ec)) continue;
    // refs/main holds the revision `from_pretrained` would take.
    auto main = ReadInputFile((repo / "refs" / "main").string(), 256);
    if (main) {
      std::string rev = *main;
      while (!rev.empty() && std::isspace(static_cast<unsigned char>(rev.back()))) rev.pop_back();
      const auto snap = repo / "snapshots" / rev;
      if (!rev.empty() && rev.find('/') == std::string::npos &&
          std::filesystem::is_regular_file(snap / "config.json", ec)) {
        return snap;
      }
    }
    std::vector<std::filesystem::path> snaps;
    for (const auto& e : std::filesystem::directory_iterator(repo / "snapshots", ec)) {
      if (std::filesystem::is_regular_file(e.path() / "config.json", ec)) snaps.push_back(e.path());
    }
    if (!snaps.empty()) return *std::min_element(snaps.begin(), snaps.end());
  }
  return std::nullopt;
}

nlohmann::json RunConfigToJson(const RunConfig& config, std::string_view file) {
  return {{"file", std::string(file)},
          {"format", std::string(Name(config.format))},
          {"base_model", config.base_model},
          {"model_origin", config.model_origin},
          {"set", config.set},
          {"not_modelled", config.not_modelled}};
}

std::optional<Message> NotModelledNote(const RunConfig& config, std::string_view file) {
  if (config.not_modelled.empty()) return std::nullopt;
  std::string keys;
  for (const auto& k : config.not_modelled) keys += (keys.empty() ? "" : ", ") + k;
  // TRANSLATORS: {0} is the run's configuration file, {1} its format (axolotl, trl, ...), {2}
  // the keys it has that the plan does not model, as written in the file.
  return Msg("from {0} ({1}): not modelled: {2}", std::string(file), Name(config.format), keys);
}

}  // namespace headroom
