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
#include "plan/plan_request.h"
#include "plan/workload.h"

namespace CLI {
class App;
}

namespace headroom {

// Flag values are kept as text (plan/plan_request.h) and checked by ParsePlanRequest.
struct PlanFlags : PlanFlagText {
  std::string journal;
  bool json = false;
  bool list_models = false;
};

// Registers the input flags (model .. --root) on `app`, in plan's --help order.
void AddPlanInputFlags(CLI::App& app, PlanFlags& fl);

// The model, workload and budget the flags describe (ParsePlanRequest, ResolvePlanRequest);
// throws UsageError naming the flag, its message translated.
// Reads proc/meminfo below --root (or env.default_root) unless --budget is given.
PlanInputs ResolvePlanInputs(const PlanFlags& fl, const CliEnv& env);

// The context the CLI resolves requests in: `default_root` ("" = the CLI's), the reserve
// from HEADROOM_RESERVE, [plan] reserve or its default.
PlanContext CliPlanContext(const CliEnv& env, const std::string& default_root = "");

// Text split into words: blanks separate, single or double quotes group. An unterminated
// quote is a UsageError naming `flag`.
std::vector<std::string> SplitWords(std::string_view text, std::string_view flag);

// plan's input flags given as words (`ladder --plan-args`, the old form a journal may still
// hold), parsed by plan's flag definitions and checked by ParsePlanRequest; errors are
// UsageError prefixed with `flag`. The request's root is empty unless --root is in them.
// `base`: the flags' values before the words are read (doctor's own syntax sets some).
PlanRequest ParsePlanWords(const std::vector<std::string>& words, std::string_view flag,
                           PlanFlags base = {});

// doctor --workload's text, "qlora llama-3.1-70b seq 8192 [--plan-flag ...]"
// (plan/plan_words.h ParseWorkloadWords, then plan's flags by their definitions); errors are
// UsageError naming --workload.
PlanRequest ParseWorkloadRequest(const std::string& text);

// A request resolved by the CLI's context; errors are UsageError prefixed with `flag`.
// Without a root in it, the budget is read below `default_root` ("" = the CLI's).
PlanInputs ResolveRequest(const PlanRequest& request, std::string_view flag,
                          const std::string& default_root, const CliEnv& env);

// The words parsed and resolved (`report --plan-args`, `doctor --workload`). Without --root
// in them, the budget is read below `default_root` ("" = the CLI's).
PlanInputs ResolvePlanWords(const std::vector<std::string>& words, std::string_view flag,
                            const std::string& default_root, const CliEnv& env);

}  // namespace headroom
