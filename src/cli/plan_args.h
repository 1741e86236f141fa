// The flags that describe a plan's inputs (model, method, workload, budget, --from FILE),
// shared by `plan`, `ladder start --plan-args`, `report --plan-args` and `doctor --workload`,
// so all turn the same text into the same ModelSpec, Workload and Budget. Errors are
// UsageError naming the flag (exit 2, doctor's 3).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli.h"
#include "config/settings.h"
#include "model/model_spec.h"
#include "plan/budget.h"
#include "plan/footprint.h"
#include "plan/plan_request.h"
#include "plan/run_config.h"
#include "plan/workload.h"

namespace CLI {
class App;
}

namespace headroom {

// Flag values are kept as text (plan/plan_request.h) and checked by ParsePlanRequest.
struct PlanFlags : PlanFlagText {
  std::string from;  // --from FILE: the run's own configuration file
  std::string journal;
  bool json = false;
  bool list_models = false;
};

// Registers the input flags on `app`: one per field of plan/plan_fields' table, in its order,
// and --from after the model; the table's help translated.
void AddPlanInputFlags(CLI::App& app, PlanFlags& fl);

// The model, workload and budget the flags describe (ParsePlanRequest, ResolvePlanRequest);
// throws UsageError naming the flag, its message translated.
// Reads proc/meminfo below --root (or env.default_root) unless --budget is given.
PlanInputs ResolvePlanInputs(const PlanFlags& fl, const CliEnv& env);

// The context the CLI resolves requests in: `default_root` ("" = the CLI's), the reserve
// from HEADROOM_RESERVE, [plan] reserve or its default.
PlanContext CliPlanContext(const CliEnv& env, const std::string& default_root = "");

// plan --from: the file's values laid under the command line's, in `fl` (plan/plan_fields
// LayerPlanText: a flag `app` counted wins over the file, the file over the framework's
// profile; a model, --config or --params on the command line replaces the file's model).
// `*sources` (when not null): where each field came from. Throws UsageError naming the file
// and key. `getenv` gives the Hugging Face cache's place (HF_HUB_CACHE, HF_HOME,
// XDG_CACHE_HOME, HOME).
RunConfig ApplyRunConfig(const CLI::App& app, PlanFlags& fl, const GetEnvFn& getenv,
                         PlanSources* sources = nullptr);

// Without --from: where each field came from, a flag `app` counted, the framework's profile
// or the default.
PlanSources FlagSources(const CLI::App& app, const PlanFlags& fl);

// --from FILE as words gave it: the file as read, and its path made absolute (a ladder
// re-plans from the journal, maybe from another folder: the words it records name this path).
struct FromFile {
  std::string path;
  RunConfig config;
};

// Plan's input flags given as words, read: the request, the --from file if one was among
// them, and the words again with --from's path made absolute (what `ladder start` records).
struct PlanWords {
  PlanRequest request;
  std::optional<FromFile> from;
  std::vector<std::string> words;
};

// The folders a Hugging Face id is looked up in, as huggingface_hub finds its cache
// (constants.py): HF_HUB_CACHE, else HF_HOME/hub, else XDG_CACHE_HOME/huggingface/hub, else
// ~/.cache/huggingface/hub.
std::vector<std::filesystem::path> HfCacheDirs(const GetEnvFn& getenv);

// Text split into words: blanks separate, single or double quotes group. An unterminated
// quote is a UsageError naming `flag`.
std::vector<std::string> SplitWords(std::string_view text, std::string_view flag);

// plan's input flags given as words (`ladder --plan-args`, the old form a journal may still
// hold), parsed by plan's flag definitions and checked by ParsePlanRequest; errors are
// UsageError prefixed with `flag`. The request's root is empty unless --root is in them.
// `base`: the flags' values before the words are read (doctor's own syntax sets some);
// `base_given`: the fields of `base` that were given (RunConfig::set's names), which a
// --from file among the words does not override, as flags beside it.
// A --from FILE among the words is read (ApplyRunConfig, the Hugging Face cache from
// std::getenv): a relative path from the current folder, made absolute; a file that is
// missing, not a regular file or does not read is a UsageError naming `flag` and the file.
PlanWords ReadPlanWords(const std::vector<std::string>& words, std::string_view flag,
                        PlanFlags base = {}, const std::vector<std::string>& base_given = {});

// ReadPlanWords' request only.
PlanRequest ParsePlanWords(const std::vector<std::string>& words, std::string_view flag,
                           PlanFlags base = {});

// doctor --workload's text, "qlora llama-3.1-70b seq 8192 [--plan-flag ...]", or
// "from FILE [qlora] [seq N] ..." / "--from FILE ..." (plan/plan_words.h ParseWorkloadWords,
// then plan's flags by their definitions; the workload's own words override the file as
// flags do); errors are UsageError naming --workload. `*from`: the file, when one was read.
PlanRequest ParseWorkloadRequest(const std::string& text, std::optional<FromFile>* from = nullptr);

// A request resolved by the CLI's context; errors are UsageError prefixed with `flag`.
// Without a root in it, the budget is read below `default_root` ("" = the CLI's).
PlanInputs ResolveRequest(const PlanRequest& request, std::string_view flag,
                          const std::string& default_root, const CliEnv& env);

// The words parsed and resolved (`report --plan-args`). Without --root in them, the budget
// is read below `default_root` ("" = the CLI's). `*from`: the --from file, when one was read.
PlanInputs ResolvePlanWords(const std::vector<std::string>& words, std::string_view flag,
                            const std::string& default_root, const CliEnv& env,
                            std::optional<FromFile>* from = nullptr);

}  // namespace headroom
