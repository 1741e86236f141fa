// A plan request: what `plan` is asked (a model, a workload, a budget), typed, with a JSON
// form (docs/plan-json.md, "Plan requests"). `plan`'s flags, `ladder start --plan-args`,
// `report --plan-args` and `doctor --workload` all end here, and the ladder keeps the JSON
// form in the journal instead of shell words (docs/journal.md).
//
//   PlanFlagText  -- ParsePlanRequest -->  PlanRequest  -- ResolvePlanRequest -->  PlanInputs
//   (flag text)      syntax, conflicts     (typed; JSON)   catalog, config.json,   (ModelSpec,
//                                                          /proc/meminfo           Workload,
//                                                          Budget)
//
// Errors are message values naming the flag (or the JSON key), for the caller to print:
// nothing here translates (docs/architecture.md, "The never rules").
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/message.h"
#include "model/model_spec.h"
#include "plan/budget.h"
#include "plan/footprint.h"
#include "plan/workload.h"

namespace headroom {

// The text of plan's input flags as given; "" is "not given". The defaults are those plan's
// --help states; "" in optimizer, optimizer_step, grad_ckpt and loss is "from the framework's
// profile" (plan/framework_profile.h).
struct PlanFlagText {
  std::string model;
  std::string framework;  // --framework NAME; "" = the default stack (hf)
  std::string devices;    // --devices N; "" = 1
  std::string sharding;   // --sharding ddp|fsdp|zero2|zero3; "" = ddp when devices > 1
  std::string config;
  std::string params;
  std::string hidden, layers, heads, kv_heads, intermediate, vocab, experts, active_experts;
  std::string method = "lora";
  std::string lora_rank;
  std::string lora_targets;
  std::string lora_dropout;
  std::string weight_dtype;
  std::string optimizer;
  std::string optimizer_step;
  bool master_weights = false;
  std::string batch = "1";
  std::string seq = "2048";
  std::string grad_ckpt;  // on|off|offload
  std::string attention = "sdpa";
  std::string loss;
  std::string workload = "sft";
  std::string rollout_fraction;
  std::string double_quant = "on";
  std::string reserve;
  std::string budget;
  std::string overhead;
  std::string root;
  std::string platform;  // --platform unified|discrete; "" = the context's
};

// Where a field's value came from (plan/plan_fields LayerPlanText decides it).
enum class PlanSource { kDefault, kProfile, kFile, kFlag };
std::string_view Name(PlanSource s);  // "default", "profile", "file", "flag"

// Every field's source, by its name in plan/plan_fields' table ("batch", "lora_rank").
using PlanSources = std::map<std::string_view, PlanSource>;

enum class ModelSource { kCatalog, kConfig, kParams };
std::string_view Name(ModelSource s);  // "catalog", "config", "params"

// --params' shape flags; a field not given is borrowed from the catalog's nearest dense model.
struct ModelShape {
  std::optional<int64_t> hidden, layers, heads, kv_heads, intermediate, vocab, experts,
      active_experts;
  bool operator==(const ModelShape&) const = default;
};

struct PlanRequest {
  ModelSource source = ModelSource::kCatalog;
  std::string model;    // the catalog name (kCatalog) or the config path (kConfig)
  uint64_t params = 0;  // kParams: the parameter count
  ModelShape shape;     // kParams only
  Workload workload;
  Parallelism parallel;                    // --devices, --sharding (plan/sharding.h)
  std::optional<uint64_t> budget_bytes;    // --budget: the whole budget
  std::optional<uint64_t> reserve_bytes;   // --reserve: else the context's default
  std::optional<uint64_t> overhead_bytes;  // --overhead
  std::string root;                        // --root; "" = the context's default root
  std::optional<bool> unified_memory;      // --platform; nullopt = the context's
  // Where each field's value came from; not in the JSON form (a request read back from it
  // names what it stores "flag", as a request of flags does).
  PlanSources sources;
};

// What a request is resolved against: the CLI's values, passed down.
struct PlanContext {
  std::filesystem::path default_root = "/";  // where proc/meminfo is when the request has no root
  uint64_t default_reserve_bytes = 0;        // HEADROOM_RESERVE, [plan] reserve, or 4 GiB
  // The levels config.toml (or its variables) sets: guard.kill_level, guard.warn_level,
  // plan.reserve (sys/pool_levels.h); unset ones follow their rules. A reserve here wins
  // over default_reserve_bytes, --reserve over both.
  LevelInputs levels{};
  // Whether the GPU shares the host's memory (GB10, integrated, no GPU) or has its own
  // (discrete): [platform] kind in config.toml; plan does not probe NVML.
  bool unified_memory = true;
};

struct PlanInputs {
  ModelSpec spec;
  std::string model_source;  // Name(ModelSource)
  std::vector<Message> model_notes;
  Workload workload;
  Budget budget;
  FootprintOptions options;  // pool size, --overhead, --devices and --sharding
  PlanSources sources;       // the request's
};

// The flags' text checked and typed: each value parsed, the conflicts between flags refused.
// The fields whose text is not the default's are the given ones; the framework's profile
// fills the rest it has a value for (LayerPlanText, plan/plan_fields.h), and `sources` says
// which. On failure nullopt, and `*error` names the flag.
std::optional<PlanRequest> ParsePlanRequest(const PlanFlagText& text, Message* error);

// The model (catalog, config.json and safetensors, or --params), the workload and the
// budget (proc/meminfo below the request's root, unless it gives a budget). On failure
// nullopt, and `*error` names the flag.
std::optional<PlanInputs> ResolvePlanRequest(const PlanRequest& request, const PlanContext& context,
                                             Message* error);

// The JSON form: {"schema_version": 1, "model": "llama-3.1-8b", "method": "qlora", "batch": 4,
// ...}, one key per field of plan/plan_fields' table that the request holds (its json_key),
// numbers as numbers, on/off as booleans, --lora-targets as an array of names.
inline constexpr int kPlanRequestSchemaVersion = 1;
nlohmann::json PlanRequestToJson(const PlanRequest& request);

// Read back through the same checks as the flags. Anything else (not an object, another
// schema_version, an unknown key, a value of the wrong type, a value a flag would refuse) is
// nullopt with `*error` saying what and where.
std::optional<PlanRequest> PlanRequestFromJson(const nlohmann::json& json, Message* error);

}  // namespace headroom
