// The flags that describe a plan's inputs (model, method, workload, budget), shared by
// `plan` and by `ladder --plan-args`, so both turn the same text into the same ModelSpec,
// Workload and Budget. Errors are UsageError naming the flag (exit 2 in either command).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cli/cli.h"
#include "model/model_spec.h"
#include "plan/budget.h"
#include "plan/footprint.h"
#include "plan/workload.h"

namespace CLI {
class App;
}

namespace headroom {

// Flag values are kept as text and parsed by the library's parsers in ResolvePlanInputs.
struct PlanFlags {
  std::string model;
  std::string journal;
  std::string config;
  std::string params;
  std::string hidden, layers, heads, kv_heads, intermediate, vocab, experts, active_experts;
  std::string method = "lora";
  std::string lora_rank;
  std::string lora_targets;
  std::string lora_dropout;
  std::string weight_dtype;
  std::string optimizer = "adamw";
  std::string optimizer_step = "foreach";
  bool master_weights = false;
  std::string batch = "1";
  std::string seq = "2048";
  std::string grad_ckpt = "on";
  std::string attention = "sdpa";
  std::string loss = "standard";
  std::string workload = "sft";
  std::string rollout_fraction;
  std::string double_quant = "on";
  std::string reserve;
  std::string budget;
  std::string overhead;
  std::string root;
  bool json = false;
  bool list_models = false;
};

// Registers the input flags (model .. --root) on `app`, in plan's --help order.
void AddPlanInputFlags(CLI::App& app, PlanFlags& fl);

struct PlanInputs {
  ModelSpec spec;
  std::string model_source;  // "catalog", "config", "params"
  std::vector<std::string> model_notes;
  Workload workload;
  Budget budget;
  FootprintOptions options;  // pool size and --overhead
};

// The model, workload and budget the flags describe; throws UsageError naming the flag.
// Reads proc/meminfo below --root (or env.default_root) unless --budget is given.
PlanInputs ResolvePlanInputs(const PlanFlags& fl, const CliEnv& env);

// Text split into words: blanks separate, single or double quotes group. An unterminated
// quote is a UsageError naming `flag`.
std::vector<std::string> SplitWords(std::string_view text, std::string_view flag);

// plan's input flags given as words (`ladder --plan-args`, `report --plan-args`, `doctor
// --workload`), parsed and resolved by the code above; errors are UsageError prefixed with
// `flag`. Without --root in them, the budget is read below `default_root` ("" = the CLI's).
PlanInputs ResolvePlanWords(const std::vector<std::string>& words, std::string_view flag,
                            const std::string& default_root, const CliEnv& env);

}  // namespace headroom
