// `headroom ladder`'s flags (docs/ladder.md): the subcommands start, record, next and apply,
// the variables their options write, and their definitions.
#pragma once

#include <string>

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

}  // namespace headroom
