// `headroom ladder`: the OOM ladder as a recorded, per-job workflow (docs/ladder.md). The
// state lives in the journal, so it survives restarts; the steps are ladder/ladder_steps.h,
// the ladder's plan ladder/ladder_plan.h, what is printed cli/ladder_view.h. Nothing here
// changes the system except `apply`. Exit status: 0 done, 1 refused or a precondition not
// met, 2 usage.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "base/text.h"
#include "cli/cli.h"
#include "cli/config_defaults.h"
#include "cli/i18n.h"
#include "cli/ladder_flags.h"
#include "cli/ladder_view.h"
#include "cli/message_text.h"
#include "cli/plan_args.h"
#include "ladder/ladder_plan.h"
#include "ladder/ladder_steps.h"
#include "store/journal.h"
#include "sys/sysroot.h"

namespace headroom {
namespace {

// A refusal: printed as one line, exit 1.
struct Refusal {
  std::string message;
};

// ladder's flags: the app, then the subcommands and the variables their options write.
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
  CLI::App& App() override { return app; }
};

}  // namespace

std::unique_ptr<CommandFlags> DefineLadderFlags() {
  auto defined = std::make_unique<LadderCommandFlags>();
  AddLadderFlags(defined->app, defined->fl);
  return defined;
}

namespace {

// The engine's outcome, or its refusal thrown to be printed (exit 1).
template <typename T>
T Take(LadderOutcome<T> outcome) {
  if (const auto* refusal = std::get_if<LadderRefusal>(&outcome))
    throw Refusal{TranslatedText(refusal->message)};
  return std::move(std::get<T>(outcome));
}

Journal OpenJournal(const CliEnv& env, const std::string& journal_flag, bool read_only) {
  auto path = JournalPath(env, journal_flag);
  if (!path) throw Refusal{TranslatedText(path.error().what)};
  auto journal = Journal::Open(*path, JournalOptions{.read_only = read_only});
  if (!journal) throw Refusal{TranslatedText(journal.error().what)};
  return std::move(journal).value();
}

// The journal, created if need be, and its ladders: opened once the flags are checked.
struct Ladders {
  Ladders(const CliEnv& env, const std::string& journal_flag)
      : journal(OpenJournal(env, journal_flag, false)) {}
  Journal journal;
  LadderJournal ladders{journal};
};

// start, record, next or apply: what the engine did, printed.
int Step(const CliEnv& env, const LadderFlags& f, const SysRoot& root) {
  const auto now = std::chrono::system_clock::now();
  const LadderInputs inputs = LadderInputsFor(root, CliPlanContext(env), ReadOldPlanWords);
  if (f.start->parsed()) {
    const auto symptom = ParseLadderSymptom(f.symptom);
    if (!symptom) throw UsageError{"--symptom: " + TranslatedText(symptom.error().what)};
    // Blank text is in every command line: the job would always seem to be running.
    if (TrimBlanks(f.job).empty())
      throw UsageError{Tr("JOB: a blank name would match every process")};
    if (f.start->count("--match") && TrimBlanks(f.match).empty())
      throw UsageError{Tr("--match: blank text would match every process")};
    const LadderPlanArgs plan = PlanArgsFlag(env, root, f.plan_args);
    const LadderRow row = NewLadderRow(f.job, *symptom, f.match, plan.recorded, plan.request);
    Ladders l(env, f.journal);
    PrintLadderStarted(env.out, row, Take(StartLadder(l.ladders, row, inputs, now)));
    if (const std::string note = LadderFromNote(plan); !note.empty())
      std::fprintf(env.out, "  %s\n", note.c_str());
  } else if (f.record->parsed()) {
    const auto result = ParseLadderResult(f.result);
    if (!result) throw UsageError{"--result: " + TranslatedText(result.error().what)};
    Ladders l(env, f.journal);
    PrintLadderRecorded(env.out, f.job,
                        Take(RecordResult(l.ladders, f.job, *result, f.note, inputs, now)));
  } else if (f.next->parsed()) {
    Ladders l(env, f.journal);
    PrintLadderSkipped(env.out, f.job,
                       Take(SkipStep(l.ladders, f.job, f.force, f.note, inputs, now)));
  } else {
    Ladders l(env, f.journal);
    FlushRequest request{root, ::getpid(), ::geteuid() == 0,
                         [&] { return ConfirmFlush(env, root, f.yes); }};
    PrintLadderFlushed(env.out, f.job, Take(ApplyFlush(l.ladders, f.job, f.note, request, now)));
  }
  return kExitOk;
}

}  // namespace

int RunLadderCommand(const CliEnv& env, CommandFlags& given_flags) {
  auto& [app, f] = FlagsOf<LadderCommandFlags>(given_flags);
  const SysRoot root(f.root.empty() ? env.default_root : std::filesystem::path(f.root));
  const auto given = app.get_subcommands();  // at most one
  const std::string which = given.empty() ? "" : given.front()->get_name();
  const std::string prefix = which.empty() ? "ladder: " : fmt::format("ladder: {}: ", which);
  try {
    if (!which.empty()) return Step(env, f, root);
    // Only reads: a journal that does not exist yet holds no ladders and is not created.
    auto path = JournalPath(env, f.journal);
    if (!path) throw Refusal{TranslatedText(path.error().what)};
    std::error_code ec;  // unreadable: OpenJournal below names the file and the reason
    if (!std::filesystem::exists(*path, ec) && !ec) return ShowLadders(env, nullptr, root, f.json);
    Journal journal = OpenJournal(env, f.journal, true);
    return ShowLadders(env, &journal, root, f.json);
  } catch (const UsageError& e) {
    PrintError(env, prefix + e.message);
    return kExitUsage;
  } catch (const Refusal& r) {
    PrintError(env, prefix + r.message);
    return kExitNegative;
  }
}

}  // namespace headroom
