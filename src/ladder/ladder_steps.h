// The OOM ladder's step engine: what `ladder start`, `record`, `next` and `apply` do to a
// job's ladder (docs/ladder.md), on the journal (ladder/ladder_journal.h). Each returns what
// happened as data, the entries written included, or a refusal; the CLI prints either in
// the user's language (a refusal is exit 1).
//
// What a step proposes is computed once, when the step is entered: its lines are message
// values (the journal stores them, the terminal translates them), its evidence data. What
// the advice reads (proc/meminfo for the flush, the ladder's plan for steps 2 to 4) comes
// through LadderInputs, which the caller supplies: a failure's text becomes evidence, in
// English.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/message.h"
#include "base/result.h"
#include "base/wall_time.h"
#include "ladder/ladder.h"
#include "ladder/ladder_advice.h"
#include "ladder/ladder_journal.h"
#include "sys/meminfo.h"
#include "sys/sysroot.h"

namespace headroom {

struct LadderInputs {
  // proc/meminfo now (step 1's advice); an error's text is evidence.
  std::function<Result<MemInfo>()> meminfo;
  // The ladder's plan for steps 2 to 4 (its plan request resolved); nullopt and `*error`
  // when it cannot be had now (evidence, rendered in English). Called only for a ladder
  // with a plan request.
  std::function<std::optional<LadderPlanInput>(const LadderRow& ladder, Message* error)> plan;
};

// What `step` proposes for `ladder`, now.
StepAdvice AdviseStep(int step, const LadderRow& ladder, const LadderInputs& inputs);

// The "entered" entry of `step`: its text the advice lines joined into one message, its
// evidence the advice's with the lines in English and the symptom's note.
LadderEntry EnterStep(int step, const LadderRow& ladder, const LadderInputs& inputs);

// A refusal: one line for people.
struct LadderRefusal {
  Message message;
};
template <typename T>
using LadderOutcome = std::variant<T, LadderRefusal>;

struct LadderStarted {
  int64_t id = 0;
  LadderEntry entry;  // step 1's
};
// A new ladder for `row` (job, symptom, match text, plan), at step 1.
LadderOutcome<LadderStarted> StartLadder(LadderJournal& ladders, const LadderRow& row,
                                         const LadderInputs& inputs, WallTime now);

struct LadderMoved {
  LadderRow ladder;                  // as it was
  LadderState next;                  // as it is now
  std::vector<LadderEntry> entries;  // written; the last is the next step's when open
};
// `ladder record JOB --result R`.
LadderOutcome<LadderMoved> RecordResult(LadderJournal& ladders, const std::string& job,
                                        LadderResult result, const std::string& note,
                                        const LadderInputs& inputs, WallTime now);
// `ladder next JOB [--force]`.
LadderOutcome<LadderMoved> SkipStep(LadderJournal& ladders, const std::string& job, bool force,
                                    const std::string& note, const LadderInputs& inputs,
                                    WallTime now);

struct FlushRequest {
  SysRoot root;         // where proc/ is (processes, meminfo, drop_caches)
  pid_t self = 0;       // headroom's own pid, never the job
  bool is_root = true;  // geteuid() == 0
  // Asked last, before the flush: a refusal (not confirmed) or nullopt to go on.
  std::function<std::optional<Message>()> confirm;
};
struct LadderFlushed {
  LadderRow ladder;
  Message flushed;  // "flushed the page cache: MemAvailable ... before, ... after"
};
// `ladder apply JOB`: step 1 only, between runs, as root, confirmed; the state does not
// move (the result comes from the next run).
LadderOutcome<LadderFlushed> ApplyFlush(LadderJournal& ladders, const std::string& job,
                                        const std::string& note, const FlushRequest& request,
                                        WallTime now);

}  // namespace headroom
