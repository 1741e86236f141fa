// `headroom plan`: flags -> ModelSpec + Workload + Budget -> PlanResult -> table or JSON.
//
// --from FILE reads the run's own configuration first (cli/plan_args ApplyRunConfig), and the
// flags given beside it are laid over it. Flag values are taken as strings and parsed by the
// library's parsers, so every error is one line naming the flag and what is wrong (exit 2). Exit
// status: 0 fits or tight, 1 does not fit, 2 usage or input error; with --solve (cli/plan_solve),
// 0 when a value fits, 1 when not even 1 does.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/i18n.h"
#include "cli/plan_args.h"
#include "cli/plan_beside.h"
#include "cli/plan_pipeline.h"
#include "cli/plan_pools.h"
#include "cli/plan_solve.h"
#include "cli/plan_view.h"
#include "plan/measured_anchors.h"
#include "plan/plan.h"
#include "plan/pools.h"
#include "plan/run_config.h"

namespace headroom {
namespace {

// plan's flags: the app, then the variables its options write.
struct PlanCommandFlags final : CommandFlags {
  CLI::App app{
      Tr("Will this training run fit in the memory pool? Sums weights, gradients, optimizer "
         "states, activations, logits, framework overhead and the model-load transient, against "
         "MemAvailable from /proc/meminfo (never nvidia-smi).\n\n"
         "exit status: 0 fits or tight, 1 does not fit, 2 usage or input error"),
      "headroom plan"};
  PlanFlags fl;
  PlanPoolFlags pool_flags;
  PipelineFlags pipeline_flags;
  PlanBesideFlags beside_flags;
  std::string solve;  // --solve batch|seq|rank
  CLI::App& App() override { return app; }
};

}  // namespace

std::unique_ptr<CommandFlags> DefinePlanFlags() {
  auto defined = std::make_unique<PlanCommandFlags>();
  auto& [app, fl, pool_flags, pipeline_flags, beside_flags, solve] = *defined;
  AddPlanInputFlags(app, fl);  // --from among them
  AddPipelineFlags(app, pipeline_flags);
  AddPlanPoolFlags(app, pool_flags);
  AddPlanBesideFlags(app, beside_flags);
  AddPlanSolveFlag(app, solve);
  AddJsonFlag(app, fl.json);
  app.add_flag("--list-models", fl.list_models, Tr("list the catalog and exit"));
  AddJournalFlag(app, fl.journal);
  return defined;
}

int RunPlan(const CliEnv& env, CommandFlags& given_flags) {
  auto& [app, fl, pool_flags, pipeline_flags, beside_flags, solve] =
      FlagsOf<PlanCommandFlags>(given_flags);
  if (fl.list_models) {
    if (fl.json) {
      std::fprintf(env.out, "%s\n", CatalogToJson().dump(2).c_str());
    } else {
      PrintCatalog(env);
    }
    return kExitOk;
  }

  try {
    if (ServeOnly(beside_flags, fl)) return RunServeOnly(env, beside_flags, fl);
    std::optional<RunConfig> from;
    PlanSources sources;
    if (!fl.from.empty()) {
      from = ApplyRunConfig(app, fl, std::getenv, &sources);
    } else {
      sources = FlagSources(app, fl);
    }
    // --sharding pipeline: one device running one micro-batch, split into stages below.
    const auto pipeline = TakePipeline(&fl, pipeline_flags);
    PlanInputs in = ResolvePlanInputs(fl, env);
    in.sources = std::move(sources);  // the command line's, which the request cannot tell
    const PlanPools pools = ResolvePlanPools(pool_flags, fl, env, &in);
    const auto beside = ResolvePlanBeside(beside_flags, fl, env, &in);
    if (pipeline) return PrintPipelinePlan(env, in, *pipeline, fl.json);
    std::optional<SolvedPlan> solved;  // --solve: the plan shown is the answer's
    if (app.count("--solve") > 0) solved = SolvePlan(solve, in, pools);
    std::vector<PoolJudgement> judged;
    PlanResult plan = solved ? solved->shown : JudgedPlan(in, pools, &judged);
    if (solved) judged = solved->judged;
    const auto journal = JournalPath(env, fl.journal);
    const auto local = journal ? LocalAnchors(*journal, in.spec, fl.model, in.workload)
                               : std::vector<ShownAnchor>{};
    if (fl.json) {
      auto j = PlanToJson(plan);
      j["measured_anchors"] = LocalAnchorsJson(local);
      j["pools"] = PoolsToJson(judged);
      if (pools.device) j["device"] = DevicePoolToJson(*pools.device);
      if (pools.target) j["target"] = pools.target->name;
      if (from) j["from"] = RunConfigToJson(*from, fl.from);
      if (!beside.empty()) j["beside"] = BesideToJson(beside);
      if (solved) j["solve"] = SolutionToJson(solved->solution);
      std::fprintf(env.out, "%s\n", j.dump(2).c_str());
    } else {
      if (from) PrintRunConfig(env, *from, fl.from);
      PrintBeside(env, beside);
      if (solved) PrintSolution(env, solved->solution);
      PrintPlan(env, plan, {judged, pools.device, pools.target});
      PrintLocalAnchors(env, local);
    }
    if (solved) return SolveExitStatus(solved->solution);
    return plan.verdict == Verdict::kDoesNotFit ? kExitNegative : kExitOk;
  } catch (const UsageError& e) {
    PrintError(env, "plan: " + e.message);
    return kExitUsage;
  }
}

}  // namespace headroom
