// Implementation notes: moved from cli/ladder_cmd.cc with the same order of checks and the
// same messages (msgids unchanged, so po/zh_TW.po still matches them). A refusal inside this
// file is thrown as a LadderRefusal and caught at each public function, so no exception
// leaves the module.
#include "ladder/ladder_steps.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "ladder/flush.h"

namespace headroom {
namespace {

template <typename T>
T Must(Result<T> r) {
  if (!r) throw LadderRefusal{r.error().what};
  return std::move(*r);
}

LadderRow NeedOpenLadder(LadderJournal& ladders, const std::string& job) {
  auto found = Must(ladders.FindOpen(job));
  if (!found) {
    throw LadderRefusal{Msg(
        "job '{0}' has no open ladder (start one: headroom ladder start {0} --symptom load|step)",
        job)};
  }
  return *found;
}

template <typename T, typename F>
LadderOutcome<T> Refusable(F&& body) {
  try {
    return body();
  } catch (const LadderRefusal& r) {
    return r;
  }
}

}  // namespace

StepAdvice AdviseStep(int step, const LadderRow& ladder, const LadderInputs& inputs) {
  if (step == 1) {
    auto info = inputs.meminfo();
    if (info) return FlushAdvice(*info);
    StepAdvice advice;
    advice.lines.push_back(Msg("{}; the flush command: {}", info.error().what, kFlushCommand));
    advice.evidence["error"] = EnglishText(info.error().what);
    return advice;
  }
  if (ladder.plan_args.empty() && ladder.plan_request.empty()) return UnplannedStepAdvice(step);
  Message error;
  if (auto in = inputs.plan(ladder, &error)) return PlanStepAdvice(step, *in);
  // Validated at start; a budget that cannot be read now is evidence, not a failure.
  StepAdvice advice = UnplannedStepAdvice(step);
  advice.evidence["error"] = EnglishText(error);
  return advice;
}

LadderEntry EnterStep(int step, const LadderRow& ladder, const LadderInputs& inputs) {
  StepAdvice advice = AdviseStep(step, ladder, inputs);
  if (const auto symptom = ParseLadderSymptom(ladder.symptom)) {
    if (const Message note = SymptomNote(*symptom, step); !note.empty())
      advice.evidence["symptom_note"] = EnglishText(note);
  }
  advice.evidence["lines"] = nlohmann::json::array();
  for (const auto& line : advice.lines) advice.evidence["lines"].push_back(EnglishText(line));
  return LadderEntry{
      step, "entered", JoinMessages(advice.lines, "; "), std::nullopt, "", advice.evidence.dump(),
      ""};
}

LadderOutcome<LadderStarted> StartLadder(LadderJournal& ladders, const LadderRow& row,
                                         const LadderInputs& inputs, WallTime now) {
  return Refusable<LadderStarted>([&] {
    LadderEntry entry = EnterStep(kLadderFirstStep, row, inputs);
    const int64_t id = Must(ladders.Start(row, {entry}, now));
    return LadderStarted{id, std::move(entry)};
  });
}

LadderOutcome<LadderMoved> RecordResult(LadderJournal& ladders, const std::string& job,
                                        LadderResult result, const std::string& note,
                                        const LadderInputs& inputs, WallTime now) {
  return Refusable<LadderMoved>([&] {
    LadderMoved moved;
    moved.ladder = NeedOpenLadder(ladders, job);
    const LadderRow& ladder = moved.ladder;
    moved.next = Must(AfterResult(ladder.state, result));
    // TRANSLATORS: a ladder entry: the step's number and name (flush-page-cache, ...), then the
    // result as recorded (ok or oom), both kept as they are.
    moved.entries.push_back({ladder.state.step, "result",
                             Msg("step {} ({}): {}", ladder.state.step,
                                 LadderStepName(ladder.state.step), Name(result)),
                             std::string(Name(result)), note, "{}", ""});
    if (moved.next.status == LadderStatus::kOpen)
      moved.entries.push_back(EnterStep(moved.next.step, ladder, inputs));
    Must(ladders.Advance(ladder.id, ladder.state, moved.next, moved.entries, now));
    return moved;
  });
}

LadderOutcome<LadderMoved> SkipStep(LadderJournal& ladders, const std::string& job, bool force,
                                    const std::string& note, const LadderInputs& inputs,
                                    WallTime now) {
  return Refusable<LadderMoved>([&] {
    LadderMoved moved;
    moved.ladder = NeedOpenLadder(ladders, job);
    const LadderRow& ladder = moved.ladder;
    moved.next = Must(AfterSkip(ladder.state, force));
    // TRANSLATORS: a ladder entry: the step's number and name (flush-page-cache, ...).
    moved.entries = {{ladder.state.step, "skipped",
                      Msg("step {} ({}) skipped with --force, without a result", ladder.state.step,
                          LadderStepName(ladder.state.step)),
                      std::nullopt, note, "{}", ""},
                     EnterStep(moved.next.step, ladder, inputs)};
    Must(ladders.Advance(ladder.id, ladder.state, moved.next, moved.entries, now));
    return moved;
  });
}

LadderOutcome<LadderFlushed> ApplyFlush(LadderJournal& ladders, const std::string& job,
                                        const std::string& note, const FlushRequest& request,
                                        WallTime now) {
  return Refusable<LadderFlushed>([&] {
    const SysRoot& root = request.root;
    LadderRow ladder = NeedOpenLadder(ladders, job);
    if (ladder.state.step != 1) {
      throw LadderRefusal{
          Msg("apply runs step 1 (the flush) only; job '{}' is at step {} ({}), "
              "which is a change to the training command",
              job, ladder.state.step, LadderStepName(ladder.state.step))};
    }
    // Between runs only: while the job runs, a flush drops its own file pages, which it reads
    // back, and frees nothing it will not take again.
    const auto running = FindJobProcesses(root, ladder.match_text, request.self);
    if (!running.empty()) {
      throw LadderRefusal{Msg("job '{}' is running (pid {}: {}); flush between runs only", job,
                              running.front().pid, running.front().cmdline.substr(0, 80))};
    }
    if (!request.is_root) {
      throw LadderRefusal{
          Msg("apply needs root to write {}; run as root, or by hand: sudo sh -c '{}'",
              root.Path(kDropCachesPath).string(), kFlushCommand)};
    }
    if (request.confirm) {
      if (auto refused = request.confirm()) throw LadderRefusal{std::move(*refused)};
    }
    const MemInfo before = Must(ReadMemInfo(root));
    Must(DropPageCache(root));
    const MemInfo after = Must(ReadMemInfo(root));
    const auto b = before.available_bytes();
    const auto a = after.available_bytes();
    nlohmann::json evidence = {
        {"mem_available_before_bytes", b ? nlohmann::json(*b) : nlohmann::json(nullptr)},
        {"mem_available_after_bytes", a ? nlohmann::json(*a) : nlohmann::json(nullptr)},
        {"drop_caches", root.Path(kDropCachesPath).string()}};
    // One message: the journal's entry, and the screen's line translated.
    auto gb = [](const std::optional<uint64_t>& v) {
      return v ? MessageArg(GB(*v)) : MessageArg(std::string("?"));
    };
    Message flushed = Msg("flushed the page cache: MemAvailable {} before, {} after", gb(b), gb(a));
    // The state does not move: the result comes from the next run (`ladder record`).
    Must(ladders.Advance(ladder.id, ladder.state, ladder.state,
                         {{1, "applied", flushed, std::nullopt, note, evidence.dump(), ""}}, now));
    return LadderFlushed{std::move(ladder), std::move(flushed)};
  });
}

}  // namespace headroom
