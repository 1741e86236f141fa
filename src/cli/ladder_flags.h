// `headroom ladder`'s flags (docs/ladder.md): the subcommands start, record, next and apply,
// the variables their options write, their definitions, and the reader of --plan-args.
#pragma once

#include <optional>
#include <string>

#include "base/message.h"
#include "cli/cli.h"
#include "cli/plan_args.h"
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

// start's --plan-args, read: the request steps 2-4 are planned from (none for ""), the text
// the journal keeps beside it (the words again, a --from FILE's path made absolute), and the
// --from file as read, for its note.
struct LadderPlanArgs {
  std::optional<PlanRequest> request;
  std::string recorded;
  std::optional<FromFile> from;
};

// start's --plan-args: plan's flags as words (--from FILE among them), parsed by plan's
// definitions and resolved now below `root`, so that a mistake is a usage error at start, not
// evidence later. The --from file is read now, once: the request it gives is what the journal
// keeps and later steps plan from.
LadderPlanArgs PlanArgsFlag(const CliEnv& env, const SysRoot& root, const std::string& plan_args);

// "from FILE (format): not modelled: ...", translated, for `ladder start` to print under its
// first step; "" when there is none.
std::string LadderFromNote(const LadderPlanArgs& plan);

// The old form of a ladder's plan (ladder/ladder_plan.h PlanWordsReader): rows from before
// journal schema 5 hold --plan-args' words only. Plan's usage errors are finished text.
std::optional<PlanRequest> ReadOldPlanWords(const std::string& words, Message* error);

}  // namespace headroom
