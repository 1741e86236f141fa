// `headroom ladder`: the OOM ladder as a recorded, per-job workflow (docs/ladder.md).
//
//   ladder                          every open ladder: where it is, what was done, evidence
//   ladder start JOB --symptom load|step [--plan-args "..."] [--match TEXT]
//   ladder record JOB --result ok|oom [--note TEXT]
//   ladder next JOB [--force]       skip the current step (refused without --force)
//   ladder apply JOB [--yes]        step 1 only: flush the page cache, as root, between runs
//
// The state lives in the journal, so it survives restarts; nothing here changes the system
// except `apply`. Exit status: 0 done, 1 refused or a precondition not met, 2 usage.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "cli/cli.h"
#include "cli/common_flags.h"
#include "cli/config_defaults.h"
#include "cli/i18n.h"
#include "cli/ladder_view.h"
#include "cli/message_text.h"
#include "cli/plan_args.h"
#include "ladder/flush.h"
#include "ladder/ladder.h"
#include "ladder/ladder_advice.h"
#include "ladder/ladder_journal.h"
#include "ladder/ladder_steps.h"
#include "plan/plan_request.h"
#include "store/journal.h"
#include "sys/meminfo.h"
#include "sys/sysroot.h"

namespace headroom {
namespace {

// A refusal: printed as one line, exit 1.
struct Refusal {
  std::string message;
};

struct LadderFlags {
  std::string journal;
  std::string root;
  bool json = false;
  std::string job;
  std::string symptom;
  std::string plan_args;
  std::string match;
  std::string result;
  std::string note;
  bool force = false;
  bool yes = false;
};

// "--plan-args: <why>", kept as a message: the engine renders it in English for the
// journal, the usage error in the user's language.
Message PlanArgsError(const Message& why) { return MsgFrom("--plan-args: {}", why); }

// The ladder's plan request: its JSON form (journal schema 5), else the old form that rows
// written before it hold, plan's flags as words. nullopt and `*error` when it does not read.
std::optional<PlanRequest> LadderPlanRequest(const LadderRow& ladder, Message* error) {
  if (!ladder.plan_request.empty()) {
    Message m;
    auto request = PlanRequestFromJson(
        nlohmann::json::parse(ladder.plan_request, nullptr, /*allow_exceptions=*/false), &m);
    if (!request) *error = PlanArgsError(m);
    return request;
  }
  try {
    return ParsePlanWords(SplitWords(ladder.plan_args, "--plan-args"), "--plan-args");
  } catch (const UsageError& e) {
    // Rows from before schema 5 only: plan's usage errors are still finished text.
    *error = Message::Literal(e.message);
    return std::nullopt;
  }
}

// The request resolved; without a root or a budget in it, the budget is read below the
// ladder's --root. nullopt and `*error` ("--plan-args: ...") when it cannot be.
std::optional<LadderPlanInput> ResolveLadderPlan(const PlanRequest& request, const SysRoot& root,
                                                 const CliEnv& env, Message* error) {
  Message m;
  auto in = ResolvePlanRequest(request, CliPlanContext(env, root.root().string()), &m);
  if (!in) {
    *error = PlanArgsError(m);
    return std::nullopt;
  }
  return LadderPlanInput{in->spec, in->workload, in->budget.budget_bytes, in->options};
}

// What the step engine reads (ladder/ladder_steps.h): a failure is a message, which the
// engine keeps as evidence in English.
LadderInputs Inputs(const SysRoot& root, const CliEnv& env) {
  return {[&root] { return ReadMemInfo(root); },
          [&root, &env](const LadderRow& ladder, Message* error) -> std::optional<LadderPlanInput> {
            auto request = LadderPlanRequest(ladder, error);
            if (!request) return std::nullopt;
            return ResolveLadderPlan(*request, root, env, error);
          }};
}

// The engine's outcome, or its refusal thrown to be printed (exit 1).
template <typename T>
T Take(LadderOutcome<T> outcome) {
  if (const auto* refusal = std::get_if<LadderRefusal>(&outcome))
    throw Refusal{TranslatedText(refusal->message)};
  return std::move(std::get<T>(outcome));
}

Journal OpenJournal(const CliEnv& env, const LadderFlags& fl, bool read_only) {
  auto path = JournalPath(env, fl.journal);
  if (!path) throw Refusal{TranslatedText(path.error().what)};
  auto journal = Journal::Open(*path, JournalOptions{.read_only = read_only});
  if (!journal) throw Refusal{TranslatedText(journal.error().what)};
  return std::move(journal).value();
}

int Start(const LadderFlags& fl, const SysRoot& root, const CliEnv& env) {
  const auto symptom = ParseLadderSymptom(fl.symptom);
  if (!symptom) throw UsageError{"--symptom: " + TranslatedText(symptom.error().what)};
  std::optional<PlanRequest> request;
  if (!fl.plan_args.empty()) {
    request = ParsePlanWords(SplitWords(fl.plan_args, "--plan-args"), "--plan-args");
    Message error;  // usage errors now, not later
    if (!ResolveLadderPlan(*request, root, env, &error)) throw UsageError{TranslatedText(error)};
  }
  LadderRow row;
  row.job = fl.job;
  row.symptom = std::string(Name(*symptom));
  row.match_text = fl.match.empty() ? fl.job : fl.match;
  row.plan_args = fl.plan_args;
  if (request) row.plan_request = PlanRequestToJson(*request).dump();
  Journal journal = OpenJournal(env, fl, false);
  LadderJournal ladders(journal);
  const LadderStarted started =
      Take(StartLadder(ladders, row, Inputs(root, env), std::chrono::system_clock::now()));
  PrintLadderStarted(env.out, row, started);
  return kExitOk;
}

int Record(const LadderFlags& fl, const SysRoot& root, const CliEnv& env) {
  const auto result = ParseLadderResult(fl.result);
  if (!result) throw UsageError{"--result: " + TranslatedText(result.error().what)};
  Journal journal = OpenJournal(env, fl, false);
  LadderJournal ladders(journal);
  const LadderMoved moved = Take(RecordResult(ladders, fl.job, *result, fl.note, Inputs(root, env),
                                              std::chrono::system_clock::now()));
  PrintLadderRecorded(env.out, fl.job, moved);
  return kExitOk;
}

int Next(const LadderFlags& fl, const SysRoot& root, const CliEnv& env) {
  Journal journal = OpenJournal(env, fl, false);
  LadderJournal ladders(journal);
  const LadderMoved moved = Take(SkipStep(ladders, fl.job, fl.force, fl.note, Inputs(root, env),
                                          std::chrono::system_clock::now()));
  PrintLadderSkipped(env.out, fl.job, moved);
  return kExitOk;
}

// A yes from the terminal; false on anything else or end of input.
bool Confirm(const CliEnv& env, const SysRoot& root) {
  // TRANSLATORS: the confirmation prompt; the answer is read as y, Y or yes, so keep [y/N].
  std::fprintf(env.err, "headroom: ladder: apply: %s ",
               TrFormat("flush the page cache now (sync; echo 3 > {})? [y/N]",
                        root.Path(kDropCachesPath).string())
                   .c_str());
  std::fflush(env.err);
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes";
}

int Apply(const LadderFlags& fl, const SysRoot& root, const CliEnv& env) {
  Journal journal = OpenJournal(env, fl, false);
  LadderJournal ladders(journal);
  FlushRequest request{root, ::getpid(), ::geteuid() == 0, [&]() -> std::optional<Message> {
                         if (fl.yes) return std::nullopt;
                         if (!::isatty(STDIN_FILENO))
                           return Msg("stdin is not a terminal to confirm on; pass --yes");
                         if (!Confirm(env, root)) return Msg("not confirmed; nothing done");
                         return std::nullopt;
                       }};
  const LadderFlushed done =
      Take(ApplyFlush(ladders, fl.job, fl.note, request, std::chrono::system_clock::now()));
  PrintLadderFlushed(env.out, fl.job, done);
  return kExitOk;
}

// ladder's flags: the app, then the variables its options write.
struct LadderCommandFlags final : CommandFlags {
  CLI::App app{
      Tr("The OOM ladder, one job at a time, recorded in the journal: 1 flush the page cache, "
         "2 shorter packing then smaller batch, 3 QLoRA to bf16 LoRA, 4 a smaller model or a "
         "second machine. Steps go in order; a skip needs --force and is recorded. Without a "
         "subcommand: every open ladder, with its evidence. Only `apply` changes the system.\n\n"
         "exit status: 0 done, 1 refused or a precondition not met (no open ladder, a skip "
         "without --force, not root, the job running, no confirmation, journal unusable), "
         "2 usage error"),
      "headroom ladder"};
  LadderFlags fl;
  CLI::App* start = nullptr;
  CLI::App* record = nullptr;
  CLI::App* next = nullptr;
  CLI::App* apply = nullptr;
  CLI::App& App() override { return app; }
};

}  // namespace

std::unique_ptr<CommandFlags> DefineLadderFlags() {
  auto defined = std::make_unique<LadderCommandFlags>();
  auto& [app, fl, start, record, next, apply] = *defined;
  app.fallthrough();
  app.require_subcommand(0, 1);
  AddJournalFlag(app, fl.journal);
  AddRootFlag(app, fl.root);
  AddJsonFlag(app, fl.json);
  start = app.add_subcommand("start", Tr("begin a ladder for JOB after an OOM"));
  start->add_option("job", fl.job, Tr("the job's name"))->required();
  start
      ->add_option("--symptom", fl.symptom,
                   Tr("load (OOM while loading the model) or step (in a training step)"))
      ->required();
  start->add_option("--plan-args", fl.plan_args,
                    Tr("plan's flags for this job, e.g. \"llama-3.1-8b --method qlora --seq 4096 "
                       "--batch 4\": steps 2-4 are planned from them"));
  start->add_option("--match", fl.match,
                    Tr("text in the job's command line (default: JOB): a process with it means the "
                       "job is running"));
  record =
      app.add_subcommand("record", Tr("record the result of rerunning JOB at its current step"));
  record->add_option("job", fl.job, Tr("the job's name"))->required();
  record
      ->add_option("--result", fl.result,
                   Tr("ok (closes the ladder, solved) or oom (on to the next step)"))
      ->required();
  record->add_option("--note", fl.note, Tr("free text kept with the result"));
  next = app.add_subcommand(
      "next", Tr("skip JOB's current step without a result (needs --force; recorded)"));
  next->add_option("job", fl.job, Tr("the job's name"))->required();
  next->add_flag("--force", fl.force, Tr("skip even though the step has no result"));
  next->add_option("--note", fl.note, Tr("why it was skipped"));
  apply = app.add_subcommand(
      "apply", Tr("step 1: flush the page cache (root, between runs, after confirming)"));
  apply->add_option("job", fl.job, Tr("the job's name"))->required();
  apply->add_flag("--yes", fl.yes, Tr("do not ask (needed when stdin is not a terminal)"));
  apply->add_option("--note", fl.note, Tr("free text kept with the flush"));
  return defined;
}

int RunLadderCommand(const CliEnv& env, CommandFlags& given_flags) {
  auto& [app, fl, start, record, next, apply] = FlagsOf<LadderCommandFlags>(given_flags);
  const SysRoot root(fl.root.empty() ? env.default_root : std::filesystem::path(fl.root));
  const char* which = start->parsed()    ? "start"
                      : record->parsed() ? "record"
                      : next->parsed()   ? "next"
                      : apply->parsed()  ? "apply"
                                         : "";
  try {
    if (start->parsed()) return Start(fl, root, env);
    if (record->parsed()) return Record(fl, root, env);
    if (next->parsed()) return Next(fl, root, env);
    if (apply->parsed()) return Apply(fl, root, env);
    // Only reads: a journal that does not exist yet holds no ladders and is not created.
    auto path = JournalPath(env, fl.journal);
    if (!path) throw Refusal{TranslatedText(path.error().what)};
    std::error_code ec;  // unreadable: OpenJournal below names the file and the reason
    if (!std::filesystem::exists(*path, ec) && !ec) return ShowLadders(env, nullptr, root, fl.json);
    Journal journal = OpenJournal(env, fl, true);
    return ShowLadders(env, &journal, root, fl.json);
  } catch (const UsageError& e) {
    PrintError(env,
               fmt::format("ladder: {}{}", *which ? std::string(which) + ": " : "", e.message));
    return kExitUsage;
  } catch (const Refusal& r) {
    PrintError(env,
               fmt::format("ladder: {}{}", *which ? std::string(which) + ": " : "", r.message));
    return kExitNegative;
  }
}

}  // namespace headroom
