// The journal: one SQLite database that records every guarded run and every sweep trial,
// so `history` can list them and a sweep can resume from them. docs/journal.md has the
// schema, the version policy and the path rules.
//
// Concurrency: WAL mode and a busy timeout, so two headroom processes writing at once both
// succeed (each write waits up to the timeout for the other's transaction to end).
// Versioning: PRAGMA user_version counts the migrations applied; a file from a newer
// headroom is refused before anything is written to it.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/message.h"
#include "base/result.h"
#include "base/wall_time.h"
#include "store/sqlite.h"

namespace headroom {

// The schema this binary writes: the number of migrations it knows (journal.cc).
inline constexpr int kJournalSchemaVersion = 6;
// The oldest schema a read-only open accepts without a migration: versions 4 to 6 only
// added nullable columns (ladder_entries.text_message, ladders.plan_request, runs.notes_json,
// trials.notes_message), which readers of an older file read as NULL. Older files are refused
// read-only, as before (a recording command upgrades them).
inline constexpr int kJournalOldestReadableVersion = 3;

// Where the journal lives: `flag` (--journal) if given, else $HEADROOM_JOURNAL, else
// $XDG_STATE_HOME/headroom/journal.db, else $HOME/.local/state/headroom/journal.db.
// `getenv` reads one variable (nullptr when unset); the CLI passes std::getenv, tests a
// table. Empty values count as unset, and so does a relative XDG_STATE_HOME (the XDG base
// directory spec says to ignore those). Error only when nothing names a place.
Result<std::filesystem::path> ResolveJournalPath(
    std::string_view flag, const std::function<const char*(const char*)>& getenv);

enum class RunKind { kGuard, kSweep, kWatch, kGuardian };
// "guard", "sweep", "watch", "guardian" (`headroom guardian`, docs/guardian.md)
std::string_view RunKindName(RunKind kind);

enum class TrialOutcome { kOk, kOverLimit, kKilledByGuard, kOom, kError, kTimeout, kSkipped };
// "ok", "over-limit", "killed-by-guard", "oom", "error", "timeout", "skipped"
std::string_view TrialOutcomeName(TrialOutcome outcome);

// One row of `runs`, as stored (text fields verbatim, so a reader shows what was written).
struct RunRow {
  int64_t id = 0;
  std::string kind;                     // "guard" | "sweep"
  std::string started_at;               // ISO-8601 UTC
  std::optional<std::string> ended_at;  // nullopt until FinishRun
  std::vector<std::string> command;     // the job's argv
  std::string status;                   // "running" until FinishRun
  // What headroom exited with, as stored: an SQLite INTEGER is 64 bits, and a row another
  // program wrote may hold any of them (99999999999 once read back as 1215752191).
  std::optional<int64_t> exit_status;
  std::optional<std::string> summary_json;  // a JSON object, nullopt until FinishRun
  std::string host;
  // The run's notes (a guard's: privileges it lacked, degradations), to be rendered in the
  // reader's language: the stored messages (runs.notes_json, schema version 6), else, in
  // rows written before, the English texts of the summary's "notes" as literal text.
  std::vector<Message> notes;
};

// What a sweep records about one trial.
struct Trial {
  std::string config_json = "{}";  // the trial's settings, JSON
  TrialOutcome outcome = TrialOutcome::kOk;
  std::optional<uint64_t> peak_bytes;     // peak pool use, when measured
  std::optional<int64_t> headroom_bytes;  // budget minus peak: negative when over
  std::string notes;                      // English, as the notes column holds it
  // The notes as a message value, stored beside them (trials.notes_message); empty: none.
  Message notes_message;
  WallTime started_at;
  WallTime ended_at;
};

struct TrialRow {
  int64_t id = 0;
  int64_t run_id = 0;
  std::string config_json;
  std::string outcome;
  std::optional<int64_t> peak_bytes;
  std::optional<int64_t> headroom_bytes;
  std::string notes;  // English, as written
  // The notes to be rendered in the reader's language: the stored message, else (rows
  // written before schema version 6, or with none) `notes` as literal text.
  Message notes_message;
  std::string started_at;
  std::optional<std::string> ended_at;
};

struct EventRow {
  int64_t id = 0;
  int64_t run_id = 0;
  std::string type;  // "start", "warn", "trigger", ... as guard events name them
  double monotonic_s = 0;
  std::string wall_time;
  std::string data_json;
};

// Totals over every guarded run and sweep trial, for `headroom export`'s counters.
struct GuardTotals {
  int64_t guard_runs = 0;
  int64_t guard_kills = 0;          // guard runs with status "killed-by-guard"
  int64_t guard_warnings = 0;       // sum of the runs' summary "warnings"
  int64_t sweep_trials_killed = 0;  // trials with outcome "killed-by-guard"
  // `headroom guardian`'s runs (docs/guardian.md): its "kill" and "warn" events.
  int64_t guardian_kills = 0;
  int64_t guardian_warnings = 0;
};

struct JournalOptions {
  // Read-only: never creates, migrates or writes; a file with no schema yet reads as
  // empty. `history` opens this way.
  bool read_only = false;
  // How long a write waits for another process's transaction. A write transaction here
  // lasts about one fsync (milliseconds), so 5 s is only reached when something holds the
  // lock far longer than headroom ever does.
  std::chrono::milliseconds busy_timeout{5000};
};

// The header fields Open checks before touching a file.
struct JournalFileFacts {
  int64_t application_id = 0;
  int64_t user_version = 0;
  int64_t tables = 0;  // rows in sqlite_master
};

class Journal {
 public:
  // Opens (creating the file and its missing parent directories, mode 0700, unless read
  // only) and migrates to kJournalSchemaVersion. Errors name the path and the reason: not
  // a database, not a headroom journal, a newer schema, locked, permission denied.
  static Result<Journal> Open(const std::filesystem::path& path,
                              const JournalOptions& options = {});

  Journal(Journal&&) noexcept = default;
  Journal& operator=(Journal&&) noexcept = default;

  const std::filesystem::path& path() const { return path_; }
  int schema_version() const { return schema_version_; }  // 0: read-only and never written

  // A new run with status "running"; its id. `sweep_key`: a sweep's identity (see
  // FindSweep), empty for guard runs.
  Result<int64_t> BeginRun(RunKind kind, const std::vector<std::string>& command,
                           WallTime started_at, std::string_view host = "",
                           std::string_view sweep_key = "");
  // The newest sweep run begun with this key, if any: the run a rerun resumes.
  Result<std::optional<int64_t>> FindSweep(std::string_view sweep_key);
  // Marks a finished (or interrupted) run as running again, for a resumed sweep.
  Result<bool> ReopenRun(int64_t run_id);
  // Closes a run. `summary_json` must be a JSON object (or "" for none); `notes` are stored
  // as messages (runs.notes_json), so `history` shows them in its reader's language. true
  // when done.
  Result<bool> FinishRun(int64_t run_id, std::string_view status, int exit_status,
                         std::string_view summary_json, WallTime ended_at,
                         const std::vector<Message>& notes = {});
  Result<int64_t> AddTrial(int64_t run_id, const Trial& trial);
  // `data_json`: a JSON object.
  Result<int64_t> AddEvent(int64_t run_id, std::string_view type, double monotonic_s,
                           WallTime wall_time, std::string_view data_json = "{}");

  // Newest first (by id: the order BeginRun was called in), at most `limit` (>= 1).
  Result<std::vector<RunRow>> RecentRuns(int limit);
  // The runs whose status is still "running" (under way, or ended by SIGKILL or a power cut
  // before they could finish), newest first, at most `limit` (>= 1).
  Result<std::vector<RunRow>> RunningRuns(int limit);
  Result<std::vector<TrialRow>> Trials(int64_t run_id);  // in insertion order
  Result<std::vector<EventRow>> Events(int64_t run_id);  // in insertion order
  // One run by id; nullopt when there is none.
  Result<std::optional<RunRow>> FindRun(int64_t run_id);
  // One aggregate query; all zero for an empty journal.
  Result<GuardTotals> Totals();

 private:
  // The OOM ladder's tables (ladder/ladder_journal.h) share this connection and its
  // error helpers; kept in their own file so this one stays about runs.
  friend class LadderJournal;

  Journal(std::filesystem::path path, SqliteDb db, const JournalOptions& options, int version)
      : path_(std::move(path)), db_(std::move(db)), options_(options), schema_version_(version) {}

  // Validates the file and brings it to kJournalSchemaVersion. `busy`: the failure was a
  // lock, worth a retry.
  std::optional<Error> CheckAndMigrate(bool& busy);
  std::optional<Error> RefuseForeignOrNewer(const JournalFileFacts& facts) const;
  // "journal: <operation>(<path>): <SQLite's reason>".
  Error Fail(std::string_view operation) const;
  Error Refuse(std::string_view operation, Message reason) const;
  Error Refuse(std::string_view operation, std::string_view reason) const;  // reason as it is
  std::optional<Error> CheckWritable(std::string_view operation) const;
  // The runs matching `where` (an SQL WHERE clause and a trailing space, or ""), newest first.
  Result<std::vector<RunRow>> ReadRuns(std::string_view where, int limit);
  // INSERT, one row, in its own transaction; the new row's id.
  Result<int64_t> InsertOne(std::string_view operation, SqliteStatement& insert);

  std::filesystem::path path_;
  SqliteDb db_;
  JournalOptions options_;
  int schema_version_ = 0;
};

}  // namespace headroom
