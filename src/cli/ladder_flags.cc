#include "cli/ladder_flags.h"

#include <CLI/CLI.hpp>

#include "cli/common_flags.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "cli/plan_args.h"
#include "ladder/ladder_plan.h"
#include "plan/plan_words.h"
#include "plan/run_config.h"

namespace headroom {

void AddLadderFlags(CLI::App& app, LadderFlags& f) {
  app.fallthrough();
  app.require_subcommand(0, 1);
  AddJournalFlag(app, f.journal);
  AddRootFlag(app, f.root);
  AddJsonFlag(app, f.json);
  f.start = app.add_subcommand("start", Tr("begin a ladder for JOB after an OOM"));
  f.record =
      app.add_subcommand("record", Tr("record the result of rerunning JOB at its current step"));
  f.next = app.add_subcommand(
      "next", Tr("skip JOB's current step without a result (needs --force; recorded)"));
  f.apply = app.add_subcommand(
      "apply", Tr("step 1: flush the page cache (root, between runs, after confirming)"));
  for (CLI::App* sub : {f.start, f.record, f.next, f.apply})
    sub->add_option("job", f.job, Tr("the job's name"))->required();
  f.start
      ->add_option("--symptom", f.symptom,
                   Tr("load (OOM while loading the model) or step (in a training step)"))
      ->required();
  f.start->add_option("--plan-args", f.plan_args,
                      Tr("plan's flags for this job, e.g. \"llama-3.1-8b --method qlora --seq "
                         "4096 --batch 4\": steps 2-4 are planned from them"));
  f.start->add_option("--match", f.match,
                      Tr("text in the job's command line (default: JOB): a process with it means "
                         "the job is running"));
  f.record
      ->add_option("--result", f.result,
                   Tr("ok (closes the ladder, solved) or oom (on to the next step)"))
      ->required();
  f.record->add_option("--note", f.note, Tr("free text kept with the result"));
  f.next->add_flag("--force", f.force, Tr("skip even though the step has no result"));
  f.next->add_option("--note", f.note, Tr("why it was skipped"));
  f.apply->add_flag("--yes", f.yes, Tr("do not ask (needed when stdin is not a terminal)"));
  f.apply->add_option("--note", f.note, Tr("free text kept with the flush"));
}

LadderPlanArgs PlanArgsFlag(const CliEnv& env, const SysRoot& root, const std::string& plan_args) {
  if (plan_args.empty()) return {};
  PlanWords read = ReadPlanWords(SplitWords(plan_args, "--plan-args"), "--plan-args");
  Message error;
  if (!ResolveLadderPlan(read.request, CliPlanContext(env, root.root().string()), &error))
    throw UsageError{TranslatedText(error)};
  LadderPlanArgs out;
  // The words as given unless --from's path had to change: quoting as the user wrote it stays.
  out.recorded = read.from ? JoinShellWords(read.words) : plan_args;
  out.request = std::move(read.request);
  out.from = std::move(read.from);
  return out;
}

std::string LadderFromNote(const LadderPlanArgs& plan) {
  if (!plan.from) return "";
  const auto note = NotModelledNote(plan.from->config, plan.from->path);
  return note ? TranslatedText(*note) : "";
}

std::optional<PlanRequest> ReadOldPlanWords(const std::string& words, Message* error) {
  try {
    return ParsePlanWords(SplitWords(words, "--plan-args"), "--plan-args");
  } catch (const UsageError& e) {
    *error = Message::Literal(e.message);
    return std::nullopt;
  }
}

}  // namespace headroom
