// Implementation notes: the view only reads. For a ladder at step 1 it adds a live meminfo
// reading beside the one recorded when the step began, since the page cache refills while
// the user decides; plan numbers are shown as recorded (they were computed at entry).
#include "cli/ladder_view.h"

#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "base/text.h"
#include "cli/i18n.h"
#include "cli/message_text.h"
#include "ladder/flush.h"
#include "ladder/ladder.h"
#include "ladder/ladder_advice.h"
#include "ladder/ladder_journal.h"
#include "ladder/ladder_resume.h"
#include "ladder/ladder_steps.h"
#include "sys/meminfo.h"

namespace headroom {
namespace {

constexpr int kLadderJsonSchemaVersion = 1;
// The guarded runs looked through for a ladder job's last one (newest first): a journal
// holds every run of every job, and one job's last run is among the recent ones.
constexpr int kResumeRunsLooked = 500;

nlohmann::json ParseObject(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();
}

// An entry's kind as people read it; the journal's word (entered, result, skipped, applied)
// is what --json shows. The entries' texts are recorded message values, shown in the
// reader's language (rows written before schema version 4 as the English they hold).
std::string EntryKindWord(const std::string& kind) {
  // TRANSLATORS: kinds of entries in a ladder's history: a step was entered, its result was
  // recorded, it was skipped, its change (the flush) was applied.
  if (kind == "entered") return Tr("entered");
  if (kind == "result") return Tr("result");
  if (kind == "skipped") return Tr("skipped");
  if (kind == "applied") return Tr("applied");
  return kind;
}

// The job's last guarded run's checkpoint (ladder/ladder_resume.h): --json's "checkpoint".
nlohmann::json CheckpointJson(const FinishedCheckpoint& c, const ResumeAdvice& a) {
  return {{"run_id", c.run_id},
          {"run_started_at", c.run_started_at},
          {"path", c.path},
          {"step", c.step ? nlohmann::json(*c.step) : nlohmann::json(nullptr)},
          {"next_step", a.next_step ? nlohmann::json(*a.next_step) : nlohmann::json(nullptr)},
          {"duration_s", c.duration_s ? nlohmann::json(*c.duration_s) : nlohmann::json(nullptr)},
          {"source", c.source.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.source)},
          {"framework", std::string(Name(a.framework))},
          {"resume", a.commands}};
}

// Where the checkpoint is and how to resume from it, in the reader's language; the commands
// as typed. Paths and commands with control characters are shown with '?' for them.
void PrintCheckpoint(std::FILE* out, const FinishedCheckpoint& c, const ResumeAdvice& a) {
  const std::string path = ControlsAsQuestionMarks(c.path);
  std::fprintf(out, "  %s\n",
               (c.step ? TrFormat("checkpoint: the guard asked run {0} ({1}) for one; it saved "
                                  "step {2} at {3}",
                                  c.run_id, c.run_started_at, *c.step, path)
                       : TrFormat("checkpoint: the guard asked run {0} ({1}) for one; it saved "
                                  "at {2} (the step it holds is not known)",
                                  c.run_id, c.run_started_at, path))
                   .c_str());
  // TRANSLATORS: the step a resumed run starts at: a number, or this text when not known.
  const std::string next =
      a.next_step ? std::to_string(*a.next_step) : Tr("the one after the saved step");
  std::vector<std::string> cmd;
  for (const auto& command : a.commands) cmd.push_back(ControlsAsQuestionMarks(command));
  std::string line;
  switch (a.framework) {
    case ResumeFramework::kTransformers:
      // TRANSLATORS: {0} and {1} are code (kept as they are); {2} a step number.
      line = TrFormat(
          "resume (Transformers Trainer, TRL): {0}, or a script's {1}; training "
          "continues at step {2}",
          cmd.at(0), cmd.at(1), next);
      break;
    case ResumeFramework::kLightning:
      line = TrFormat("resume (Lightning): {0}; training continues at step {1}", cmd.at(0), next);
      break;
    case ResumeFramework::kLoop:
      line = TrFormat(
          "resume (plain loop, headroom.on_save): load the file your save function wrote with "
          "{0} and resume at step {1}",
          cmd.at(0), next);
      break;
    case ResumeFramework::kUnknown:
      line = TrFormat(
          "resume: the framework that wrote it is not known (the step records do not say); "
          "resume from this path as your framework does, at step {0}",
          next);
      break;
  }
  std::fprintf(out, "  %s\n", line.c_str());
}

// A ladder's entries into `into` (JSON) and, without --json, as lines; the entry that entered
// the ladder's current step, or null.
const LadderEntryRow* ShowLadderEntries(const CliEnv& env, const LadderRow& l,
                                        const std::vector<LadderEntryRow>& entries, bool json,
                                        nlohmann::json& into) {
  const LadderEntryRow* current = nullptr;
  for (const auto& e : entries) {
    into.push_back({{"step", e.step},
                    {"kind", e.kind},
                    {"text", EnglishText(e.text)},
                    {"result", e.result ? nlohmann::json(*e.result) : nlohmann::json(nullptr)},
                    {"note", e.note},
                    {"evidence", ParseObject(e.evidence_json)},
                    {"at", e.at}});
    if (e.kind == "entered" && e.step == l.state.step) current = &e;
    if (!json) {
      // TRANSLATORS: one entry of a ladder's history: when, the step, the entry's kind, its
      // recorded text and the user's --note.
      const std::string text = TranslatedText(e.text);
      std::fprintf(env.out, "  %s\n",
                   (e.note.empty() ? TrFormat("{0} step {1} {2}: {3}", e.at, e.step,
                                              EntryKindWord(e.kind), text)
                                   : TrFormat("{0} step {1} {2}: {3} (note: {4})", e.at, e.step,
                                              EntryKindWord(e.kind), text, e.note))
                       .c_str());
    }
  }
  return current;
}

}  // namespace

int ShowLadders(const CliEnv& env, Journal* journal, const SysRoot& root, bool json) {
  std::vector<LadderRow> open;
  if (journal) {
    LadderJournal ladders(*journal);
    auto rows = ladders.Open();
    if (!rows) {
      PrintError(env, "ladder: " + TranslatedText(rows.error().what));
      return kExitNegative;
    }
    open = std::move(rows).value();
  }
  // The guarded runs, for each job's last checkpoint; none read when no ladder is open.
  std::vector<RunRow> runs;
  if (journal && !open.empty()) {
    auto recent = journal->RecentRuns(kResumeRunsLooked);
    if (!recent) {
      PrintError(env, "ladder: " + TranslatedText(recent.error().what));
      return kExitNegative;
    }
    runs = std::move(recent).value();
  }
  nlohmann::json out = {{"schema_version", kLadderJsonSchemaVersion},
                        {"ladders", nlohmann::json::array()}};
  if (open.empty() && !json) std::fprintf(env.out, "%s\n", Tr("no open ladders"));
  for (const auto& l : open) {
    LadderJournal ladders(*journal);
    auto entries = ladders.Entries(l.id);
    if (!entries) {
      PrintError(env, "ladder: " + TranslatedText(entries.error().what));
      return kExitNegative;
    }
    nlohmann::json j = {{"id", l.id},
                        {"job", l.job},
                        {"symptom", l.symptom},
                        {"match", l.match_text},
                        {"plan_args", l.plan_args},
                        {"status", std::string(Name(l.state.status))},
                        {"step", l.state.step},
                        {"step_name", std::string(LadderStepName(l.state.step))},
                        {"step_title", std::string(LadderStepTitle(l.state.step))},
                        {"started_at", l.started_at},
                        {"entries", nlohmann::json::array()}};
    if (!json) {
      std::fprintf(
          env.out, "%s\n  %s\n",
          TrFormat("ladder {0}: job '{1}' (OOM at {2}), step {3} of 4: {4}", l.id, l.job, l.symptom,
                   l.state.step, TrText(LadderStepTitle(l.state.step)))
              .c_str(),
          (l.plan_args.empty()
               ? TrFormat("started {}; the job is running when a command line contains '{}'",
                          l.started_at, l.match_text)
               // TRANSLATORS: {2} is the ladder's --plan-args, as given.
               : TrFormat("started {0}; the job is running when a command line contains '{1}'; "
                          "plan: {2}",
                          l.started_at, l.match_text, l.plan_args))
              .c_str());
    }
    const LadderEntryRow* current = ShowLadderEntries(env, l, *entries, json, j["entries"]);
    if (l.state.step == 1) {
      if (auto info = ReadMemInfo(root)) {
        const StepAdvice now = FlushAdvice(*info);
        j["live"] = now.evidence;
        if (!json)
          std::fprintf(env.out, "  %s\n",
                       TrFormat("now: {}", TranslatedText(now.lines.front())).c_str());
      }
    }
    // The symptom's note for the current step (the journal's evidence holds its English).
    if (current && !json) {
      const auto symptom = ParseLadderSymptom(l.symptom);
      if (const Message note = symptom ? SymptomNote(*symptom, l.state.step) : Message();
          !note.empty()) {
        std::fprintf(env.out, "  %s\n", TrFormat("note: {}", TranslatedText(note)).c_str());
      }
    }
    // The job's last guarded run's checkpoint before the kill, and how to resume from it.
    const std::optional<FinishedCheckpoint> checkpoint = LastJobCheckpoint(runs, l.match_text);
    j["checkpoint"] = nullptr;
    if (checkpoint) {
      const ResumeAdvice advice = ResumeFor(*checkpoint);
      j["checkpoint"] = CheckpointJson(*checkpoint, advice);
      if (!json) PrintCheckpoint(env.out, *checkpoint, advice);
    }
    if (!json) {
      std::fprintf(env.out, "  %s\n",
                   (l.state.step == 1 ? TrFormat("next: flush (headroom ladder apply {0}, as "
                                                 "root), rerun the job, then: headroom "
                                                 "ladder record {0} --result ok|oom",
                                                 l.job)
                                      : TrFormat("next: change the settings as above, rerun the "
                                                 "job, then: headroom ladder record {} "
                                                 "--result ok|oom",
                                                 l.job))
                       .c_str());
    }
    out["ladders"].push_back(std::move(j));
  }
  if (json) std::fprintf(env.out, "%s\n", out.dump(2).c_str());
  return kExitOk;
}

void PrintLadderStarted(std::FILE* out, const LadderRow& row, const LadderStarted& started) {
  // TRANSLATORS: {2} is the symptom as given to --symptom (load or step); {3} the step's title.
  std::fprintf(out, "%s\n",
               TrFormat("ladder {0} for job '{1}' (OOM at {2}): step 1 of 4: {3}", started.id,
                        row.job, row.symptom, TrText(LadderStepTitle(1)))
                   .c_str());
  std::fprintf(out, "  %s\n", TranslatedText(started.entry.text).c_str());
}

void PrintLadderRecorded(std::FILE* out, const std::string& job, const LadderMoved& moved) {
  const LadderRow& ladder = moved.ladder;
  const LadderState& next = moved.next;
  const std::vector<LadderEntry>& entries = moved.entries;
  if (next.status == LadderStatus::kSolved) {
    // TRANSLATORS: {3} is the step's name (flush-page-cache, packing-then-batch, ...), kept as it
    // is.
    std::fprintf(out, "%s\n",
                 TrFormat("ladder {0} for job '{1}': solved at step {2} ({3})", ladder.id, job,
                          next.step, LadderStepName(next.step))
                     .c_str());
  } else if (next.status == LadderStatus::kExhausted) {
    std::fprintf(
        out, "%s\n",
        TrFormat("ladder {0} for job '{1}': exhausted: every step ended in an OOM", ladder.id, job)
            .c_str());
  } else {
    std::fprintf(out, "%s\n  %s\n",
                 TrFormat("ladder {0} for job '{1}': step {2} of 4: {3}", ladder.id, job, next.step,
                          TrText(LadderStepTitle(next.step)))
                     .c_str(),
                 TranslatedText(entries.back().text).c_str());
  }
}

void PrintLadderSkipped(std::FILE* out, const std::string& job, const LadderMoved& moved) {
  const LadderRow& ladder = moved.ladder;
  const LadderState& next = moved.next;
  const std::vector<LadderEntry>& entries = moved.entries;
  std::fprintf(
      out, "%s\n  %s\n",
      TrFormat("ladder {0} for job '{1}': step {2} skipped (recorded); step {3} of 4: {4}",
               ladder.id, job, ladder.state.step, next.step, TrText(LadderStepTitle(next.step)))
          .c_str(),
      TranslatedText(entries.back().text).c_str());
}

std::optional<Message> ConfirmFlush(const CliEnv& env, const SysRoot& root, bool yes) {
  if (yes) return std::nullopt;
  if (!::isatty(STDIN_FILENO)) return Msg("stdin is not a terminal to confirm on; pass --yes");
  // TRANSLATORS: the confirmation prompt; the answer is read as y, Y or yes, so keep [y/N].
  std::fprintf(env.err, "headroom: ladder: apply: %s ",
               TrFormat("flush the page cache now (sync; echo 3 > {})? [y/N]",
                        root.Path(kDropCachesPath).string())
                   .c_str());
  std::fflush(env.err);
  std::string answer;
  if (std::getline(std::cin, answer) && (answer == "y" || answer == "Y" || answer == "yes"))
    return std::nullopt;
  return Msg("not confirmed; nothing done");
}

void PrintLadderFlushed(std::FILE* out, const std::string& job, const LadderFlushed& done) {
  const LadderRow& ladder = done.ladder;
  const Message& flushed = done.flushed;
  // TRANSLATORS: {2} is "flushed the page cache: ..."; keep the command as it is.
  std::fprintf(out, "%s\n",
               TrFormat("ladder {0} for job '{1}': {2}; rerun the job, then: headroom ladder "
                        "record {1} --result ok|oom",
                        ladder.id, job, TranslatedText(flushed))
                   .c_str());
}

}  // namespace headroom
