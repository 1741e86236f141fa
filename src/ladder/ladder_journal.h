// The OOM ladder's records in the journal (schema version 3, docs/journal.md): a row per
// ladder and an append-only log of entries. Shares the Journal's connection, so WAL, the
// busy timeout and FULL sync apply as to runs.
//
// An entry's text is a message value (base/message.h). Since schema version 4 it is stored
// twice in one row, as data and never as two languages: `text` holds its English rendering
// (what ladder --json and older readers show) and `text_message` its id and arguments, so
// a reader renders it again in its own language. Rows written before version 4 have no
// `text_message`; they read back as literal text. Since version 5 a ladder keeps its plan
// request as JSON (`plan_request`) beside the flags as given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/message.h"
#include "base/result.h"
#include "base/wall_time.h"
#include "ladder/ladder.h"
#include "store/journal.h"

namespace headroom {

struct LadderRow {
  int64_t id = 0;
  std::string job;
  std::string symptom;     // "load" | "step"
  std::string match_text;  // what a running job's cmdline contains
  std::string plan_args;   // plan's flags as given, "" when none (shown to people)
  // The plan request steps 2-4 are planned from, in its JSON form (plan/plan_request.h); ""
  // when none, and in rows from before schema version 5, whose plan_args is plan's flags.
  std::string plan_request;
  LadderState state;
  std::string started_at;
  std::optional<std::string> ended_at;
};

// One entry; `kind` is "entered", "applied", "result" or "skipped" (docs/journal.md).
struct LadderEntry {
  int step = 0;
  std::string kind;
  Message text;
  std::optional<std::string> result;  // "ok" | "oom" for kind "result"
  std::string note;
  std::string evidence_json = "{}";  // a JSON object
  std::string at;                    // ISO-8601 UTC; filled in when written
};

struct LadderEntryRow : LadderEntry {
  int64_t id = 0;
  int64_t ladder_id = 0;
};

class LadderJournal {
 public:
  explicit LadderJournal(Journal& journal) : journal_(journal) {}

  // A new open ladder at step 1 with its first entries, in one transaction. Refused when
  // the job already has an open ladder.
  Result<int64_t> Start(const LadderRow& ladder, const std::vector<LadderEntry>& entries,
                        WallTime now);
  // Appends `entries` and moves the ladder from `from` to `to`, in one transaction.
  // Refused when the stored state is no longer `from` (another headroom moved it).
  Result<bool> Advance(int64_t ladder_id, const LadderState& from, const LadderState& to,
                       const std::vector<LadderEntry>& entries, WallTime now);

  Result<std::optional<LadderRow>> FindOpen(const std::string& job);
  Result<std::vector<LadderRow>> Open();  // every open ladder, oldest first
  Result<std::vector<LadderEntryRow>> Entries(int64_t ladder_id);  // in order

 private:
  std::optional<Error> Append(int64_t ladder_id, const std::vector<LadderEntry>& entries,
                              WallTime now);
  Result<std::vector<LadderRow>> Select(const char* where, const std::string* job);

  Journal& journal_;
};

}  // namespace headroom
