// Plan requests given as words on one flag: `report --plan-args` and `ladder --plan-args`
// take plan's own flags as text, `doctor --workload` a short syntax of its own. Here is the
// syntax that needs no flag definitions: splitting the text into words, and doctor's
// workload words; plan's flags among the words are parsed by the CLI's definitions
// (cli/plan_args.h ParsePlanWords) into the typed PlanRequest (plan/plan_request.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/message.h"
#include "plan/plan_request.h"

namespace headroom {

// Text split into words: blanks separate, single or double quotes group. nullopt for an
// unterminated quote, `*error` naming `flag`.
std::optional<std::vector<std::string>> SplitShellWords(std::string_view text,
                                                        std::string_view flag, Message* error);

// The words as one text that SplitShellWords reads back to the same words: a word with a
// blank, a quote or nothing in it is quoted (single quotes, a single quote itself in double).
std::string JoinShellWords(const std::vector<std::string>& words);

// doctor --workload's words, "qlora llama-3.1-70b seq 8192 batch 2": a method name, a model,
// and "seq N" / "batch N" pairs ("packing N", "bs N" too) set the fields of `text`; words
// starting with "--" (with the value after them, unless it starts with "--" or the flag has
// '=') are plan flags, appended to `*plan_flags` for plan's definitions, and "from FILE" is
// plan's --from FILE. `*given` (when not null): the fields set (RunConfig::set's names:
// "model", "method", "seq", "batch"), which a --from file does not override. nullopt when a
// pair has no value, a second model is named, or none is and no --from file names one,
// `*error` naming --workload.
std::optional<PlanFlagText> ParseWorkloadWords(const std::vector<std::string>& words,
                                               std::vector<std::string>* plan_flags, Message* error,
                                               std::vector<std::string>* given = nullptr);

}  // namespace headroom
