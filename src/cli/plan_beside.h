// plan beside inference servers: --beside CAP (repeatable) and --serve MODEL --context N
// --concurrency M [--engine E] [--dtype D]. The caps are taken out of the budget before the
// plan is made and judged (plan/beside.h), a server already running is named and not counted
// twice; --serve without a training model prints the server's own need (plan/serve.h).
// docs/plan.md, "Beside an inference server".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/plan_args.h"
#include "plan/beside.h"
#include "plan/plan_request.h"

namespace CLI {
class App;
}

namespace headroom {

struct PlanBesideFlags {
  std::vector<std::string> beside;  // --beside CAP, repeatable
  std::string serve;                // --serve MODEL
  std::string context;              // --context N
  std::string concurrency;          // --concurrency M
  std::string engine;               // --engine vllm|llama.cpp|ollama
  std::string dtype;                // --dtype: the server's weights
};

void AddPlanBesideFlags(CLI::App& app, PlanBesideFlags& flags);

// --serve given without a training model (no model, --config, --params or --from).
bool ServeOnly(const PlanBesideFlags& flags, const PlanFlags& fl);

// The budget in `in` lowered by the --beside caps and --serve's need, servers running below
// the root (--root, else the CLI's) matched; empty without either flag. Throws UsageError.
std::vector<BesideEntry> ResolvePlanBeside(const PlanBesideFlags& flags, const PlanFlags& fl,
                                           const CliEnv& env, PlanInputs* in);

// plan --serve MODEL alone: the server's need, the smallest vLLM cap, and what it leaves of
// MemAvailable; exit 0 when it fits the pool, 1 when not. Throws UsageError.
int RunServeOnly(const CliEnv& env, const PlanBesideFlags& flags, const PlanFlags& fl);

// One line per entry under the plan, and for a served one its need.
void PrintBeside(const CliEnv& env, const std::vector<BesideEntry>& entries);

}  // namespace headroom
