// Implementation notes.
//
// - Opening: make missing parent directories (0700, as the XDG base directory spec asks for
//   state directories), open, read application_id and user_version. That first read is
//   where SQLite notices a file that is not a database, so a corrupt file fails here, with
//   the path, before anything is written.
// - Migrations: kMigrations[i] takes the schema from version i to i + 1. They run in one
//   BEGIN IMMEDIATE transaction that re-reads user_version under the write lock, so two
//   processes opening a new file at once migrate it exactly once.
// - Durability: synchronous = FULL, set on every connection rather than trusting the
//   library's compiled-in default, so a committed run survives the host freezing, which is
//   the failure headroom exists for; the cost is one fsync per write, milliseconds, against
//   runs that last minutes.
// - Statements are prepared per call: a write costs an fsync, so caching them would save
//   microseconds and add state that a moved or half-migrated journal would have to track.
#include "store/journal.h"

#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/message.h"
#include "base/safe_file.h"
#include "base/stored_message.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;

// SQLite's application_id marks the file as ours ("hdrm" in ASCII), so a journal path that
// points at another program's database is refused instead of having tables added to it.
constexpr int64_t kApplicationId = 0x6864726D;

// Version 1. AUTOINCREMENT so an id is never reused, even after rows are deleted: "run 12"
// keeps meaning one run. Kinds and outcomes are checked by the writer (the enums in
// journal.h), not by CHECK constraints, so that adding one later is not a table rebuild.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL,
  started_at TEXT NOT NULL,
  ended_at TEXT,
  command TEXT NOT NULL,
  status TEXT NOT NULL,
  exit_status INTEGER,
  summary_json TEXT,
  host TEXT NOT NULL DEFAULT ''
);
CREATE TABLE trials (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  config_json TEXT NOT NULL,
  outcome TEXT NOT NULL,
  peak_bytes INTEGER,
  headroom_bytes INTEGER,
  notes TEXT NOT NULL DEFAULT '',
  started_at TEXT NOT NULL,
  ended_at TEXT
);
CREATE INDEX trials_by_run ON trials(run_id);
CREATE TABLE events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  monotonic_s REAL NOT NULL,
  wall_time TEXT NOT NULL,
  data_json TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX events_by_run ON events(run_id);
PRAGMA application_id = 1751413357;
)sql";
static_assert(kApplicationId == 1751413357, "kSchemaV1 spells the application id in decimal");

// In order: kMigrations[i] brings a file at version i to version i + 1. Append only; a
// released migration never changes.
// Version 2: a sweep's identity (its command template, grid and limits as canonical JSON),
// so a rerun of the same sweep finds the run to resume. NULL for guard runs.
constexpr const char* kSchemaV2 = R"sql(
ALTER TABLE runs ADD COLUMN sweep_key TEXT;
CREATE INDEX runs_by_sweep_key ON runs(sweep_key);
)sql";

// Version 3: the OOM ladder (ladder/ladder_journal.h). One row per ladder and an append-only
// log of what happened at each step; the partial unique index keeps one open ladder per job
// even when two headroom processes start one at once.
constexpr const char* kSchemaV3 = R"sql(
CREATE TABLE ladders (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  job TEXT NOT NULL,
  symptom TEXT NOT NULL,
  match_text TEXT NOT NULL,
  plan_args TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL,
  current_step INTEGER NOT NULL,
  started_at TEXT NOT NULL,
  ended_at TEXT
);
CREATE UNIQUE INDEX ladders_one_open_per_job ON ladders(job) WHERE status = 'open';
CREATE TABLE ladder_entries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  ladder_id INTEGER NOT NULL REFERENCES ladders(id) ON DELETE CASCADE,
  step INTEGER NOT NULL,
  kind TEXT NOT NULL,
  text TEXT NOT NULL DEFAULT '',
  result TEXT,
  note TEXT NOT NULL DEFAULT '',
  evidence_json TEXT NOT NULL DEFAULT '{}',
  at TEXT NOT NULL
);
CREATE INDEX ladder_entries_by_ladder ON ladder_entries(ladder_id);
)sql";

// Version 4: a ladder entry's text as a message value (id and arguments, base/message.h),
// beside its English text, so readers show it in their language. NULL in older rows.
constexpr const char* kSchemaV4 = R"sql(
ALTER TABLE ladder_entries ADD COLUMN text_message TEXT;
)sql";

// Version 5: a ladder's plan request in its JSON form (plan/plan_request.h), what steps 2
// to 4 are planned from; plan_args stays the text as given, for people. NULL in older rows,
// whose plan_args is read as plan's flags, as before.
constexpr const char* kSchemaV5 = R"sql(
ALTER TABLE ladders ADD COLUMN plan_request TEXT;
)sql";

// Version 6: a run's notes and a trial's notes as message values (base/message.h), so
// `history` shows them in its reader's language; the English stays where it was (the
// summary's "notes", trials.notes). NULL in older rows, which are shown as that English.
constexpr const char* kSchemaV6 = R"sql(
ALTER TABLE runs ADD COLUMN notes_json TEXT;
ALTER TABLE trials ADD COLUMN notes_message TEXT;
)sql";

constexpr const char* kMigrations[] = {kSchemaV1, kSchemaV2, kSchemaV3,
                                       kSchemaV4, kSchemaV5, kSchemaV6};
static_assert(std::size(kMigrations) == kJournalSchemaVersion, "one migration per schema version");

// Creates the missing directories above `file`, each mode 0700. Existing ones are left as
// they are.
std::optional<Error> MakeParentDirs(const fs::path& file) {
  std::vector<fs::path> missing;
  for (fs::path dir = file.parent_path(); !dir.empty(); dir = dir.parent_path()) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) return ErrnoError("journal: mkdir(" + dir.string() + ")", ENOTDIR);
      break;
    }
    if (errno != ENOENT) return ErrnoError("journal: stat(" + dir.string() + ")");
    missing.push_back(dir);
    if (dir == dir.parent_path()) break;  // "/" itself
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0700) != 0 && errno != EEXIST) {
      return ErrnoError("journal: mkdir(" + it->string() + ")");
    }
  }
  return std::nullopt;
}

// What the file says about itself, read in one statement so the three come from one
// snapshot (read one by one, another process's migration can land between them).
std::optional<JournalFileFacts> ReadFileFacts(const SqliteDb& db) {
  auto stmt = SqliteStatement::Prepare(
      db,
      "SELECT (SELECT application_id FROM pragma_application_id), "
      "(SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_master)");
  if (!stmt || stmt->Step() != SqliteStatement::StepResult::kRow) return std::nullopt;
  return JournalFileFacts{stmt->Int(0), stmt->Int(1), stmt->Int(2)};
}

std::optional<std::string> QueryText(const SqliteDb& db, std::string_view sql) {
  auto stmt = SqliteStatement::Prepare(db, sql);
  if (!stmt || stmt->Step() != SqliteStatement::StepResult::kRow) return std::nullopt;
  return stmt->Text(0);
}

bool IsJsonObject(std::string_view text) {
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return json.is_object();
}

// The argv stored as a JSON array. Arguments need not be UTF-8 (file names); invalid bytes
// become U+FFFD rather than failing the whole record.
std::string CommandJson(const std::vector<std::string>& command) {
  return nlohmann::json(command).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Reads the stored array back; text that is not one (written by hand) comes back whole, as
// a single argument, rather than failing the listing.
std::vector<std::string> ParseCommand(const std::string& text) {
  const auto json = nlohmann::json::parse(text, nullptr, false);
  if (!json.is_array()) return {text};
  std::vector<std::string> argv;
  for (const auto& arg : json) {
    if (!arg.is_string()) return {text};
    argv.push_back(arg.get<std::string>());
  }
  return argv;
}

// A run's notes: the stored messages, else (rows from before version 6, or a column edited
// by hand) the English texts of the summary's "notes" as literal text.
std::vector<Message> ReadRunNotes(const std::optional<std::string>& notes_json,
                                  const std::optional<std::string>& summary_json) {
  if (notes_json) {
    if (auto notes = MessagesFromJsonText(*notes_json)) return std::move(*notes);
  }
  std::vector<Message> notes;
  if (!summary_json) return notes;
  const auto summary = nlohmann::json::parse(*summary_json, nullptr, /*allow_exceptions=*/false);
  if (!summary.is_object() || !summary.contains("notes") || !summary["notes"].is_array()) {
    return notes;
  }
  for (const auto& note : summary["notes"]) {
    if (note.is_string()) notes.push_back(Message::Literal(note.get<std::string>()));
  }
  return notes;
}

}  // namespace

Result<fs::path> ResolveJournalPath(std::string_view flag,
                                    const std::function<const char*(const char*)>& getenv) {
  auto var = [&](const char* name) -> std::string {
    const char* value = getenv(name);
    return value ? value : "";
  };
  if (!flag.empty()) return fs::path(flag);
  if (auto explicit_path = var("HEADROOM_JOURNAL"); !explicit_path.empty()) {
    return fs::path(explicit_path);
  }
  if (auto state = var("XDG_STATE_HOME"); !state.empty() && state.front() == '/') {
    return fs::path(state) / "headroom" / "journal.db";
  }
  if (auto home = var("HOME"); !home.empty()) {
    return fs::path(home) / ".local" / "state" / "headroom" / "journal.db";
  }
  return Error{
      Msg("journal: no place for it: HOME, XDG_STATE_HOME and HEADROOM_JOURNAL are unset; "
          "pass --journal PATH")};
}

std::string_view RunKindName(RunKind kind) {
  switch (kind) {
    case RunKind::kGuard:
      return "guard";
    case RunKind::kSweep:
      return "sweep";
    case RunKind::kWatch:
      return "watch";
    case RunKind::kGuardian:
      return "guardian";
  }
  return "guard";
}

std::string_view TrialOutcomeName(TrialOutcome outcome) {
  switch (outcome) {
    case TrialOutcome::kOk:
      return "ok";
    case TrialOutcome::kOverLimit:
      return "over-limit";
    case TrialOutcome::kKilledByGuard:
      return "killed-by-guard";
    case TrialOutcome::kOom:
      return "oom";
    case TrialOutcome::kError:
      return "error";
    case TrialOutcome::kTimeout:
      return "timeout";
    case TrialOutcome::kSkipped:
      return "skipped";
  }
  return "error";
}

Result<Journal> Journal::Open(const fs::path& path, const JournalOptions& options) {
  if (path.empty()) return Error{"journal: open(): the path is empty"};
  // A regular file or nothing: SQLite would wait forever on a FIFO, and a symbolic-link loop
  // is named here rather than left to SQLite's "unable to open database file".
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (!exists && errno != ENOENT) return ErrnoError("journal: open(" + path.string() + ")");
  if (exists && !S_ISREG(st.st_mode))
    return InContext(
        "journal", Error{Msg("{0}: {1}, not a regular file", path.string(), FileKind(st.st_mode))});
  if (!options.read_only) {
    if (auto error = MakeParentDirs(path)) return *error;
  }
  sqlite3* raw = nullptr;
  const int flags =
      options.read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  Journal journal(path, SqliteDb(raw), options, 0);  // owns the handle even when rc failed
  if (rc != SQLITE_OK) return journal.Fail("open");
  sqlite3_busy_timeout(raw, static_cast<int>(options.busy_timeout.count()));
  // Both are per connection: foreign keys are off by default in SQLite, and FULL makes each
  // commit durable (implementation notes above).
  if (!journal.db_.Exec("PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL")) {
    return journal.Fail("open");
  }

  // Two processes creating the journal at once meet SQLite answers that do not wait for
  // the busy timeout (below); the whole check-and-migrate step is retried until it.
  const auto deadline = std::chrono::steady_clock::now() + options.busy_timeout;
  for (;;) {
    bool busy = false;
    auto error = journal.CheckAndMigrate(busy);
    if (!error) return journal;
    if (!busy || std::chrono::steady_clock::now() >= deadline) return *error;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::optional<Error> Journal::CheckAndMigrate(bool& busy) {
  auto fail = [&](std::string_view operation) {
    busy = db_.ErrorCode() == SQLITE_BUSY;
    return Fail(operation);
  };
  auto facts = ReadFileFacts(db_);
  if (!facts) return fail("open");
  if (auto refusal = RefuseForeignOrNewer(*facts)) return refusal;
  schema_version_ = static_cast<int>(facts->user_version);
  if (options_.read_only) {
    // Version 0 here is an empty file: nothing recorded yet, and readers say so.
    if (facts->user_version != 0 && facts->user_version < kJournalOldestReadableVersion) {
      return Refuse("open", Msg("schema version {} is older than this headroom ({}); "
                                "a recording command upgrades it",
                                facts->user_version, kJournalSchemaVersion));
    }
    return std::nullopt;
  }

  // WAL lets readers and one writer work at once and is stored in the file, so it is set
  // once. Switching needs every other connection off the file, and when one is not SQLite
  // answers SQLITE_BUSY at once, without the busy handler (two processes creating the
  // journal together: Journal.ConcurrentWritersBothSucceed); Open retries. Where the file
  // system cannot hold WAL's shared memory SQLite keeps its rollback journal; writers then
  // still take turns through the busy timeout, so that is no error.
  const auto mode = QueryText(db_, "PRAGMA journal_mode");
  if (!mode) return fail("open");
  if (*mode != "wal" && !QueryText(db_, "PRAGMA journal_mode = WAL")) return fail("open");
  if (facts->user_version == kJournalSchemaVersion) return std::nullopt;

  SqliteTransaction tx(db_);
  if (!tx.begun()) return fail("migrate");
  // Again under the write lock: another process may have migrated since the first look.
  facts = ReadFileFacts(db_);
  if (!facts) return fail("migrate");
  if (auto refusal = RefuseForeignOrNewer(*facts)) return refusal;
  for (int64_t v = facts->user_version; v < kJournalSchemaVersion; ++v) {
    if (!db_.Exec(kMigrations[v])) return fail(fmt::format("migrate to {}", v + 1));
  }
  // PRAGMA takes no bound parameters; the version is our own constant.
  const std::string set_version = fmt::format("PRAGMA user_version = {}", kJournalSchemaVersion);
  if (!db_.Exec(set_version.c_str()) || !tx.Commit()) return fail("migrate");
  schema_version_ = kJournalSchemaVersion;
  return std::nullopt;
}

std::optional<Error> Journal::RefuseForeignOrNewer(const JournalFileFacts& facts) const {
  if (facts.application_id != 0 && facts.application_id != kApplicationId) {
    return Refuse("open",
                  Msg("not a headroom journal (application_id {:#x})", facts.application_id));
  }
  // Checked before any write: a newer headroom's file is left exactly as it is.
  if (facts.user_version > kJournalSchemaVersion) {
    return Refuse("open", Msg("schema version {} is newer than this headroom ({}); "
                              "upgrade headroom",
                              facts.user_version, kJournalSchemaVersion));
  }
  if (facts.user_version == 0 && facts.tables > 0) {
    return Refuse("open", Msg("not a headroom journal (it has tables but no schema version)"));
  }
  return std::nullopt;
}

Error Journal::Fail(std::string_view operation) const {
  // SQLite's own text stays as it is (a third party's, English).
  Message reason = Message::Literal(db_.ErrorText());
  if (db_.ErrorCode() == SQLITE_BUSY) {
    reason = Message(
        "{}{}", {std::make_shared<const Message>(std::move(reason)),
                 std::make_shared<const Message>(Msg(" (another process held it longer than {} ms)",
                                                     options_.busy_timeout.count()))});
  }
  return Refuse(operation, std::move(reason));
}

Error Journal::Refuse(std::string_view operation, Message reason) const {
  return Error{
      Message("journal: {}({}): {}", {std::string(operation), path_.string(),
                                      std::make_shared<const Message>(std::move(reason))})};
}

Error Journal::Refuse(std::string_view operation, std::string_view reason) const {
  return Refuse(operation, Message::Literal(std::string(reason)));
}

std::optional<Error> Journal::CheckWritable(std::string_view operation) const {
  if (options_.read_only) return Refuse(operation, Msg("opened read-only"));
  return std::nullopt;
}

Result<int64_t> Journal::InsertOne(std::string_view operation, SqliteStatement& insert) {
  SqliteTransaction tx(db_);
  if (!tx.begun()) return Fail(operation);
  if (insert.Step() != SqliteStatement::StepResult::kDone) return Fail(operation);
  const int64_t id = db_.LastInsertId();
  if (!tx.Commit()) return Fail(operation);
  return id;
}

Result<int64_t> Journal::BeginRun(RunKind kind, const std::vector<std::string>& command,
                                  WallTime started_at, std::string_view host,
                                  std::string_view sweep_key) {
  if (auto error = CheckWritable("begin run")) return *error;
  auto insert = SqliteStatement::Prepare(
      db_,
      "INSERT INTO runs (kind, started_at, command, status, host, sweep_key) "
      "VALUES (?1, ?2, ?3, 'running', ?4, ?5)");
  if (!insert) return Fail("begin run");
  insert->Bind(1, RunKindName(kind));
  insert->Bind(2, FormatUtcIso8601(started_at));
  insert->Bind(3, CommandJson(command));
  insert->Bind(4, host);
  if (sweep_key.empty()) {
    insert->BindNull(5);
  } else {
    insert->Bind(5, sweep_key);
  }
  return InsertOne("begin run", *insert);
}

Result<std::optional<int64_t>> Journal::FindSweep(std::string_view sweep_key) {
  if (schema_version_ == 0) return std::optional<int64_t>{};
  auto select = SqliteStatement::Prepare(
      db_, "SELECT id FROM runs WHERE kind = 'sweep' AND sweep_key = ?1 ORDER BY id DESC LIMIT 1");
  if (!select) return Fail("find sweep");
  select->Bind(1, sweep_key);
  const auto step = select->Step();
  if (step == SqliteStatement::StepResult::kError) return Fail("find sweep");
  if (step == SqliteStatement::StepResult::kDone) return std::optional<int64_t>{};
  return std::optional<int64_t>{select->Int(0)};
}

Result<bool> Journal::ReopenRun(int64_t run_id) {
  if (auto error = CheckWritable("reopen run")) return *error;
  auto update = SqliteStatement::Prepare(
      db_, "UPDATE runs SET status = 'running', ended_at = NULL WHERE id = ?1");
  if (!update) return Fail("reopen run");
  update->Bind(1, run_id);
  SqliteTransaction tx(db_);
  if (!tx.begun() || update->Step() != SqliteStatement::StepResult::kDone)
    return Fail("reopen run");
  if (db_.Changes() != 1) return Refuse("reopen run", fmt::format("no run {}", run_id));
  if (!tx.Commit()) return Fail("reopen run");
  return true;
}

Result<bool> Journal::FinishRun(int64_t run_id, std::string_view status, int exit_status,
                                std::string_view summary_json, WallTime ended_at,
                                const std::vector<Message>& notes) {
  if (auto error = CheckWritable("finish run")) return *error;
  if (status.empty()) return Refuse("finish run", "empty status");
  if (!summary_json.empty() && !IsJsonObject(summary_json)) {
    return Refuse("finish run", "the summary is not a JSON object");
  }
  auto update = SqliteStatement::Prepare(
      db_,
      "UPDATE runs SET ended_at = ?2, status = ?3, exit_status = ?4, summary_json = ?5, "
      "notes_json = ?6 WHERE id = ?1");
  if (!update) return Fail("finish run");
  update->Bind(1, run_id);
  update->Bind(2, FormatUtcIso8601(ended_at));
  update->Bind(3, status);
  update->Bind(4, static_cast<int64_t>(exit_status));
  if (summary_json.empty()) {
    update->BindNull(5);
  } else {
    update->Bind(5, summary_json);
  }
  if (notes.empty()) {
    update->BindNull(6);
  } else {
    update->Bind(6, MessagesToJsonText(notes));
  }
  SqliteTransaction tx(db_);
  if (!tx.begun() || update->Step() != SqliteStatement::StepResult::kDone) {
    return Fail("finish run");
  }
  if (db_.Changes() != 1) return Refuse("finish run", fmt::format("no run {}", run_id));
  if (!tx.Commit()) return Fail("finish run");
  return true;
}

Result<int64_t> Journal::AddTrial(int64_t run_id, const Trial& trial) {
  if (auto error = CheckWritable("add trial")) return *error;
  if (!IsJsonObject(trial.config_json)) {
    return Refuse("add trial", "the trial's config is not a JSON object");
  }
  // SQLite integers are signed 64-bit; 8 EiB of peak is a bug upstream, not a reading.
  if (trial.peak_bytes && *trial.peak_bytes > uint64_t{std::numeric_limits<int64_t>::max()}) {
    return Refuse("add trial", "peak_bytes out of range");
  }
  auto insert = SqliteStatement::Prepare(
      db_,
      "INSERT INTO trials (run_id, config_json, outcome, peak_bytes, headroom_bytes, "
      "notes, started_at, ended_at, notes_message) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  if (!insert) return Fail("add trial");
  insert->Bind(1, run_id);
  insert->Bind(2, trial.config_json);
  insert->Bind(3, TrialOutcomeName(trial.outcome));
  if (trial.peak_bytes) {
    insert->Bind(4, static_cast<int64_t>(*trial.peak_bytes));
  } else {
    insert->BindNull(4);
  }
  insert->Bind(5, trial.headroom_bytes);
  insert->Bind(6, trial.notes);
  insert->Bind(7, FormatUtcIso8601(trial.started_at));
  insert->Bind(8, FormatUtcIso8601(trial.ended_at));
  if (trial.notes_message.empty()) {
    insert->BindNull(9);
  } else {
    insert->Bind(9, MessageToJsonText(trial.notes_message));
  }
  return InsertOne("add trial", *insert);
}

Result<int64_t> Journal::AddEvent(int64_t run_id, std::string_view type, double monotonic_s,
                                  WallTime wall_time, std::string_view data_json) {
  if (auto error = CheckWritable("add event")) return *error;
  if (type.empty()) return Refuse("add event", "empty event type");
  if (!std::isfinite(monotonic_s)) return Refuse("add event", "monotonic_s is not finite");
  if (!IsJsonObject(data_json)) return Refuse("add event", "the event's data is not a JSON object");
  auto insert = SqliteStatement::Prepare(
      db_,
      "INSERT INTO events (run_id, type, monotonic_s, wall_time, data_json) "
      "VALUES (?1, ?2, ?3, ?4, ?5)");
  if (!insert) return Fail("add event");
  insert->Bind(1, run_id);
  insert->Bind(2, type);
  insert->Bind(3, monotonic_s);
  insert->Bind(4, FormatUtcIso8601(wall_time));
  insert->Bind(5, data_json);
  return InsertOne("add event", *insert);
}

Result<std::vector<RunRow>> Journal::RecentRuns(int limit) { return ReadRuns("", limit); }

Result<std::vector<RunRow>> Journal::RunningRuns(int limit) {
  return ReadRuns("WHERE status = 'running' ", limit);
}

Result<std::vector<RunRow>> Journal::ReadRuns(std::string_view where, int limit) {
  if (limit < 1) return Refuse("read runs", fmt::format("limit {} is below 1", limit));
  if (schema_version_ == 0) return std::vector<RunRow>{};  // an empty file: nothing yet
  // A read-only reader of a file from before version 6 reads NULL for notes_json.
  auto select = SqliteStatement::Prepare(
      db_, fmt::format(
               "SELECT id, kind, started_at, ended_at, command, status, exit_status, summary_json, "
               "host, {} FROM runs {}ORDER BY id DESC LIMIT ?1",
               schema_version_ >= 6 ? "notes_json" : "NULL", where));
  if (!select) return Fail("read runs");
  select->Bind(1, int64_t{limit});
  auto rows = ReadAllRows<RunRow>(*select, [](const SqliteStatement& s, RunRow& row) {
    row.id = s.Int(0);
    row.kind = s.Text(1);
    row.started_at = s.Text(2);
    row.ended_at = s.OptionalText(3);
    row.command = ParseCommand(s.Text(4));
    row.status = s.Text(5);
    row.exit_status = s.OptionalInt(6);
    row.summary_json = s.OptionalText(7);
    row.host = s.Text(8);
    row.notes = ReadRunNotes(s.OptionalText(9), row.summary_json);
  });
  if (!rows) return Fail("read runs");
  return std::move(*rows);
}

Result<GuardTotals> Journal::Totals() {
  GuardTotals t;
  if (schema_version_ == 0) return t;
  auto select = SqliteStatement::Prepare(
      db_,
      "SELECT (SELECT COUNT(*) FROM runs WHERE kind = 'guard'), "
      "(SELECT COUNT(*) FROM runs WHERE kind = 'guard' AND status = 'killed-by-guard'), "
      "(SELECT COALESCE(SUM(CAST(json_extract(summary_json, '$.warnings') AS INTEGER)), 0) FROM "
      "runs "
      " WHERE kind = 'guard' AND json_valid(summary_json)), "
      "(SELECT COUNT(*) FROM trials WHERE outcome = 'killed-by-guard'), "
      "(SELECT COUNT(*) FROM events e JOIN runs r ON e.run_id = r.id "
      " WHERE r.kind = 'guardian' AND e.type = 'kill'), "
      "(SELECT COUNT(*) FROM events e JOIN runs r ON e.run_id = r.id "
      " WHERE r.kind = 'guardian' AND e.type = 'warn')");
  if (!select) return Fail("read totals");
  if (select->Step() != SqliteStatement::StepResult::kRow) return Fail("read totals");
  t.guard_runs = select->Int(0);
  t.guard_kills = select->Int(1);
  t.guard_warnings = select->Int(2);
  t.sweep_trials_killed = select->Int(3);
  t.guardian_kills = select->Int(4);
  t.guardian_warnings = select->Int(5);
  return t;
}

Result<std::optional<RunRow>> Journal::FindRun(int64_t run_id) {
  // Runs are few (one per command a person typed): the newest first, then the one wanted.
  auto runs = RecentRuns(std::numeric_limits<int>::max());
  if (!runs) return runs.error();
  for (auto& run : *runs) {
    if (run.id == run_id) return std::optional<RunRow>(std::move(run));
  }
  return std::optional<RunRow>{};
}

Result<std::vector<TrialRow>> Journal::Trials(int64_t run_id) {
  if (schema_version_ == 0) return std::vector<TrialRow>{};
  // A read-only reader of a file from before version 6 reads NULL for notes_message.
  auto select = SqliteStatement::Prepare(
      db_,
      fmt::format("SELECT id, run_id, config_json, outcome, peak_bytes, headroom_bytes, notes, "
                  "started_at, ended_at, {} FROM trials WHERE run_id = ?1 ORDER BY id",
                  schema_version_ >= 6 ? "notes_message" : "NULL"));
  if (!select) return Fail("read trials");
  select->Bind(1, run_id);
  auto rows = ReadAllRows<TrialRow>(*select, [](const SqliteStatement& s, TrialRow& row) {
    row.id = s.Int(0);
    row.run_id = s.Int(1);
    row.config_json = s.Text(2);
    row.outcome = s.Text(3);
    row.peak_bytes = s.OptionalInt(4);
    row.headroom_bytes = s.OptionalInt(5);
    row.notes = s.Text(6);
    row.started_at = s.Text(7);
    row.ended_at = s.OptionalText(8);
    row.notes_message = StoredMessageOr(s.OptionalText(9), row.notes);
  });
  if (!rows) return Fail("read trials");
  return std::move(*rows);
}

Result<std::vector<EventRow>> Journal::Events(int64_t run_id) {
  if (schema_version_ == 0) return std::vector<EventRow>{};
  auto select = SqliteStatement::Prepare(
      db_,
      "SELECT id, run_id, type, monotonic_s, wall_time, data_json FROM events "
      "WHERE run_id = ?1 ORDER BY id");
  if (!select) return Fail("read events");
  select->Bind(1, run_id);
  auto rows = ReadAllRows<EventRow>(*select, [](const SqliteStatement& s, EventRow& row) {
    row.id = s.Int(0);
    row.run_id = s.Int(1);
    row.type = s.Text(2);
    row.monotonic_s = s.Double(3);
    row.wall_time = s.Text(4);
    row.data_json = s.Text(5);
  });
  if (!rows) return Fail("read events");
  return std::move(*rows);
}

}  // namespace headroom
