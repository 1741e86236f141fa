// `headroom ladder`'s flags (docs/ladder.md): the subcommands start, record, next and apply,
// the variables their options write, their definitions, and the reader of --plan-args.
#pragma once

#include <optional>
#include <string>

#include "base/message.h"
#include "cli/cli.h"
#include "plan/plan_request.h"
#include "sys/sysroot.h"

namespace CLI {
class App;
}

namespace headroom {

struct LadderFlags {
  CLI::App *start = nullptr, *record = nullptr, *next = nullptr, *apply = nullptr;
  std::string journal, root, job, symptom, plan_args, match, result, note;
  bool json = false, force = false, yes = false;
};

// The subcommands and every option on `app`, in --help's order; without a subcommand,
// `ladder` lists the open ladders.
void AddLadderFlags(CLI::App& app, LadderFlags& f);

// start's --plan-args: plan's flags as words, parsed by plan's definitions and resolved now
// below `root`, so that a mistake is a usage error at start, not evidence later; none for "".
std::optional<PlanRequest> PlanArgsFlag(const CliEnv& env, const SysRoot& root,
                                        const std::string& plan_args);

// The old form of a ladder's plan (ladder/ladder_plan.h PlanWordsReader): rows from before
// journal schema 5 hold --plan-args' words only. Plan's usage errors are finished text.
std::optional<PlanRequest> ReadOldPlanWords(const std::string& words, Message* error);

}  // namespace headroom
