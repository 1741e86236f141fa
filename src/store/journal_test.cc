// Journal tests: real SQLite files in temporary directories, other processes (fork) for
// concurrency, and raw SQLite connections to build the hostile files (newer schema, another
// program's database, a lock held past the timeout).
#include "store/journal.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "base/message.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::TempDir;

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

std::string ReadBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs SQL on `path` through a raw connection (the test's way to build hostile files).
void RawExec(const fs::path& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

const WallTime kT0(seconds(1741944413) + milliseconds(589));  // 2025-03-14T09:26:53.589Z

TEST(JournalPath, FlagThenEnvThenXdgThenHome) {
  struct Case {
    std::string flag;
    std::map<std::string, std::string> env;
    std::string want;  // "" = an error
  };
  const std::vector<Case> cases = {
      {"/x/j.db", {{"HEADROOM_JOURNAL", "/e/j.db"}, {"HOME", "/h"}}, "/x/j.db"},
      {"", {{"HEADROOM_JOURNAL", "/e/j.db"}, {"XDG_STATE_HOME", "/s"}}, "/e/j.db"},
      {"",
       {{"HEADROOM_JOURNAL", ""}, {"XDG_STATE_HOME", "/s"}, {"HOME", "/h"}},
       "/s/headroom/journal.db"},
      {"",
       {{"XDG_STATE_HOME", "relative/state"}, {"HOME", "/h"}},
       "/h/.local/state/headroom/journal.db"},
      {"", {{"XDG_STATE_HOME", ""}, {"HOME", "/h"}}, "/h/.local/state/headroom/journal.db"},
      {"", {}, ""},
      {"", {{"HOME", ""}}, ""},
  };
  for (const Case& c : cases) {
    auto getenv = [&](const char* name) -> const char* {
      auto it = c.env.find(name);
      return it == c.env.end() ? nullptr : it->second.c_str();
    };
    auto path = ResolveJournalPath(c.flag, getenv);
    SCOPED_TRACE(c.want);
    if (c.want.empty()) {
      ASSERT_FALSE(path);
      EXPECT_NE(EnglishText(path.error().what).find("--journal"), std::string::npos);
    } else {
      ASSERT_TRUE(path) << EnglishText(path.error().what);
      EXPECT_EQ(path->string(), c.want);
    }
  }
}

TEST(Journal, CreatesParentsPrivatelyAndReopens) {
  TempDir tmp;
  const fs::path path = tmp / "state/headroom/journal.db";
  {
    auto journal = Journal::Open(path);
    ASSERT_TRUE(journal) << EnglishText(journal.error().what);
    EXPECT_EQ(journal->schema_version(), kJournalSchemaVersion);
    ASSERT_TRUE(journal->BeginRun(RunKind::kGuard, {"true"}, kT0));
  }
  struct stat st {};
  ASSERT_EQ(stat((tmp / "state").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat((tmp / "state/headroom").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  // Reopening runs no migration twice and keeps what was there.
  for (int i = 0; i < 2; ++i) {
    auto journal = Journal::Open(path);
    ASSERT_TRUE(journal) << EnglishText(journal.error().what);
    EXPECT_EQ(journal->schema_version(), kJournalSchemaVersion);
    auto runs = journal->RecentRuns(10);
    ASSERT_TRUE(runs);
    EXPECT_EQ(runs->size(), 1u);
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "wal");
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

TEST(Journal, RoundTripsRunsTrialsAndEvents) {
  TempDir tmp;
  auto journal = Journal::Open(tmp / "journal.db");
  ASSERT_TRUE(journal) << EnglishText(journal.error().what);
  // An argument with spaces, a quote and bytes that are not UTF-8 (a file name can be).
  const std::vector<std::string> argv = {"python", "train.py", "--name", "it's a run", "\xff"};
  auto guard = journal->BeginRun(RunKind::kGuard, argv, kT0, "spark-1");
  auto sweep = journal->BeginRun(RunKind::kSweep, {"sweep"}, kT0 + seconds(5));
  ASSERT_TRUE(guard && sweep);
  ASSERT_TRUE(
      journal->FinishRun(*guard, "killed", 99, R"({"killed_by_guard":true})", kT0 + seconds(65)));
  Trial trial;
  trial.config_json = R"({"batch":16})";
  trial.outcome = TrialOutcome::kKilledByGuard;
  trial.peak_bytes = 120'000'000'000;
  trial.headroom_bytes = -3'000'000'000;
  trial.notes = "crossed the kill level";
  trial.started_at = kT0 + seconds(6);
  trial.ended_at = kT0 + seconds(30);
  ASSERT_TRUE(journal->AddTrial(*sweep, trial));
  trial.outcome = TrialOutcome::kSkipped;
  trial.peak_bytes.reset();
  trial.headroom_bytes.reset();
  ASSERT_TRUE(journal->AddTrial(*sweep, trial));
  ASSERT_TRUE(journal->AddEvent(*guard, "trigger", 12.5, kT0 + seconds(12), R"({"avail":1})"));

  auto runs = journal->RecentRuns(10);
  ASSERT_TRUE(runs) << EnglishText(runs.error().what);
  ASSERT_EQ(runs->size(), 2u);
  const RunRow& s = (*runs)[0];  // newest first
  EXPECT_EQ(s.kind, "sweep");
  EXPECT_EQ(s.status, "running");
  EXPECT_FALSE(s.ended_at || s.exit_status || s.summary_json);
  const RunRow& g = (*runs)[1];
  EXPECT_EQ(g.id, *guard);
  EXPECT_EQ(g.kind, "guard");
  EXPECT_EQ(g.started_at, "2025-03-14T09:26:53.589Z");
  EXPECT_EQ(g.ended_at, "2025-03-14T09:27:58.589Z");
  EXPECT_EQ(g.command.size(), argv.size());
  EXPECT_EQ(g.command[3], "it's a run");
  EXPECT_EQ(g.command[4], "\xEF\xBF\xBD");  // U+FFFD in place of the invalid byte
  EXPECT_EQ(g.status, "killed");
  EXPECT_EQ(g.exit_status, 99);
  EXPECT_EQ(g.summary_json, R"({"killed_by_guard":true})");
  EXPECT_EQ(g.host, "spark-1");

  auto limited = journal->RecentRuns(1);
  ASSERT_TRUE(limited);
  ASSERT_EQ(limited->size(), 1u);
  EXPECT_EQ((*limited)[0].id, *sweep);

  // Only the sweep is still running.
  auto running = journal->RunningRuns(10);
  ASSERT_TRUE(running) << EnglishText(running.error().what);
  ASSERT_EQ(running->size(), 1u);
  EXPECT_EQ((*running)[0].id, *sweep);
  EXPECT_EQ((*running)[0].command, (*runs)[0].command);
  EXPECT_FALSE(journal->RunningRuns(0));

  auto trials = journal->Trials(*sweep);
  ASSERT_TRUE(trials) << EnglishText(trials.error().what);
  ASSERT_EQ(trials->size(), 2u);
  EXPECT_EQ((*trials)[0].outcome, "killed-by-guard");
  EXPECT_EQ((*trials)[0].peak_bytes, 120'000'000'000);
  EXPECT_EQ((*trials)[0].headroom_bytes, -3'000'000'000);
  EXPECT_EQ((*trials)[0].config_json, R"({"batch":16})");
  EXPECT_EQ((*trials)[0].notes, "crossed the kill level");
  EXPECT_EQ((*trials)[0].ended_at, "2025-03-14T09:27:23.589Z");
  EXPECT_EQ((*trials)[1].outcome, "skipped");
  EXPECT_FALSE((*trials)[1].peak_bytes || (*trials)[1].headroom_bytes);
  EXPECT_TRUE(journal->Trials(*guard)->empty());

  auto events = journal->Events(*guard);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].type, "trigger");
  EXPECT_DOUBLE_EQ((*events)[0].monotonic_s, 12.5);
  EXPECT_EQ((*events)[0].wall_time, "2025-03-14T09:27:05.589Z");
  EXPECT_EQ((*events)[0].data_json, R"({"avail":1})");
}

TEST(Journal, RejectsBadWrites) {
  TempDir tmp;
  auto journal = Journal::Open(tmp / "journal.db");
  ASSERT_TRUE(journal);
  auto run = journal->BeginRun(RunKind::kGuard, {"true"}, kT0);
  ASSERT_TRUE(run);
  auto missing = journal->FinishRun(*run + 100, "ok", 0, "", kT0);
  ASSERT_FALSE(missing);
  EXPECT_NE(EnglishText(missing.error().what).find("no run"), std::string::npos);
  EXPECT_FALSE(journal->FinishRun(*run, "ok", 0, "[1,2]", kT0));    // not an object
  EXPECT_FALSE(journal->FinishRun(*run, "ok", 0, "{\"a\":", kT0));  // not JSON
  EXPECT_FALSE(journal->FinishRun(*run, "", 0, "{}", kT0));
  EXPECT_FALSE(journal->AddEvent(*run, "warn", 1.0, kT0, "nope"));
  Trial trial;
  trial.peak_bytes = ~uint64_t{0};
  EXPECT_FALSE(journal->AddTrial(*run, trial));
  // The foreign key: a trial of a run that does not exist.
  auto orphan = journal->AddTrial(*run + 100, Trial{});
  ASSERT_FALSE(orphan);
  EXPECT_NE(EnglishText(orphan.error().what).find("FOREIGN KEY"), std::string::npos)
      << EnglishText(orphan.error().what);
  EXPECT_FALSE(journal->RecentRuns(0));
  // Nothing above left a row or an open transaction behind.
  ASSERT_TRUE(journal->FinishRun(*run, "ok", 0, "{}", kT0));
  EXPECT_TRUE(journal->Trials(*run)->empty());
}

// Two processes, 200 runs each, started together through a pipe: every insert lands.
TEST(Journal, ConcurrentWritersBothSucceed) {
  TempDir tmp;
  const fs::path path = tmp / "journal.db";  // not created yet: both race to create it too
  constexpr int kRunsEach = 200;
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  std::vector<pid_t> children;
  for (int child = 0; child < 2; ++child) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(go[1]);
      char c;
      (void)!read(go[0], &c, 1);  // returns 0 when the parent closes its end: go
      auto journal = Journal::Open(path);
      if (!journal) {
        std::fprintf(stderr, "child %d: %s\n", child, EnglishText(journal.error().what).c_str());
        _exit(1);
      }
      for (int i = 0; i < kRunsEach; ++i) {
        auto run = journal->BeginRun(RunKind::kSweep, {"child", std::to_string(child)}, kT0);
        if (!run || !journal->FinishRun(*run, "ok", 0, "{}", kT0)) {
          std::fprintf(stderr, "child %d run %d failed\n", child, i);
          _exit(1);
        }
      }
      _exit(0);
    }
    children.push_back(pid);
  }
  close(go[0]);
  close(go[1]);
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  auto journal = Journal::Open(path);
  ASSERT_TRUE(journal) << EnglishText(journal.error().what);
  auto runs = journal->RecentRuns(10 * kRunsEach);
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->size(), 2u * kRunsEach);
  std::map<std::string, int> per_child;
  std::set<int64_t> ids;
  for (const RunRow& r : *runs) {
    ++per_child[r.command.at(1)];
    ids.insert(r.id);
    EXPECT_EQ(r.status, "ok");
  }
  EXPECT_EQ(per_child["0"], kRunsEach);
  EXPECT_EQ(per_child["1"], kRunsEach);
  EXPECT_EQ(ids.size(), 2u * kRunsEach);
}

TEST(Journal, CorruptFileIsAnErrorNamingThePath) {
  TempDir tmp;
  const fs::path path = tmp / "journal.db";
  std::string garbage(4096, '\0');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>(i * 37 + 11);
  std::ofstream(path, std::ios::binary) << garbage;
  for (bool read_only : {false, true}) {
    auto journal = Journal::Open(path, JournalOptions{.read_only = read_only});
    ASSERT_FALSE(journal);
    const std::string& m = EnglishText(journal.error().what);
    EXPECT_NE(m.find(path.string()), std::string::npos) << m;
    EXPECT_NE(m.find("not a database"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos);
  }
  EXPECT_EQ(ReadBytes(path), garbage);  // never written to
}

TEST(Journal, NewerSchemaIsRefusedWithoutWriting) {
  TempDir tmp;
  const fs::path path = tmp / "journal.db";
  RawExec(path, "CREATE TABLE runs (id INTEGER PRIMARY KEY); PRAGMA user_version = 9;");
  const std::string before = ReadBytes(path);
  for (bool read_only : {false, true}) {
    auto journal = Journal::Open(path, JournalOptions{.read_only = read_only});
    ASSERT_FALSE(journal);
    EXPECT_EQ(EnglishText(journal.error().what),
              "journal: open(" + path.string() +
                  "): schema version 9 is newer than this headroom (" +
                  std::to_string(kJournalSchemaVersion) + "); upgrade headroom");
  }
  EXPECT_EQ(ReadBytes(path), before);
}

TEST(Journal, AnExitStatusPastA32BitIntReadsBackWhole) {
  // Regression: a row holding 99999999999 read back as 1215752191 (cut to 32 bits).
  TempDir tmp;
  const fs::path path = tmp / "journal.db";
  {
    auto journal = Journal::Open(path);
    ASSERT_TRUE(journal) << EnglishText(journal.error().what);
    auto id = journal->BeginRun(RunKind::kGuard, {"true"}, std::chrono::system_clock::now());
    ASSERT_TRUE(id);
  }
  RawExec(path, "UPDATE runs SET status = 'exited', exit_status = 99999999999;");
  RawExec(path,
          "INSERT INTO runs (kind, started_at, command, status, exit_status, host) "
          "SELECT kind, started_at, command, 'exited', -99999999999, host FROM runs;");
  auto journal = Journal::Open(path, JournalOptions{.read_only = true});
  ASSERT_TRUE(journal) << EnglishText(journal.error().what);
  auto runs = journal->RecentRuns(10);
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].exit_status, int64_t{-99999999999});
  EXPECT_EQ((*runs)[1].exit_status, int64_t{99999999999});
}

TEST(Journal, VersionOneFileIsMigratedKeepingItsRuns) {
  TempDir tmp;
  const fs::path path = tmp / "journal.db";
  // The version 1 schema as headroom 0.1 wrote it, with one guard run in it.
  RawExec(path,
          "PRAGMA application_id = 1751413357;"
          "CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, "
          "started_at TEXT NOT NULL, ended_at TEXT, command TEXT NOT NULL, status TEXT NOT NULL, "
          "exit_status INTEGER, summary_json TEXT, host TEXT NOT NULL DEFAULT '');"
          "CREATE TABLE trials (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER NOT NULL, "
          "config_json TEXT NOT NULL, outcome TEXT NOT NULL, peak_bytes INTEGER, headroom_bytes "
          "INTEGER, notes TEXT NOT NULL DEFAULT '', started_at TEXT NOT NULL, ended_at TEXT);"
          "CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER NOT NULL, "
          "type TEXT NOT NULL, monotonic_s REAL NOT NULL, wall_time TEXT NOT NULL, data_json TEXT "
          "NOT NULL DEFAULT '{}');"
          "INSERT INTO runs (kind, started_at, command, status, host) VALUES "
          "('guard', '2026-11-28T10:00:00.000Z', '[\"python\",\"train.py\"]', 'exited', 'spark');"
          "PRAGMA user_version = 1;");
  auto journal = Journal::Open(path);
  ASSERT_TRUE(journal) << EnglishText(journal.error().what);
  EXPECT_EQ(journal->schema_version(), kJournalSchemaVersion);
  auto runs = journal->RecentRuns(10);
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].command, (std::vector<std::string>{"python", "train.py"}));
  // Version 2's column works on the migrated file.
  auto id = journal->BeginRun(RunKind::kSweep, {"train", "{batch}"},
                              std::chrono::system_clock::now(), "", R"({"grid":1})");
  ASSERT_TRUE(id);
  auto found = journal->FindSweep(R"({"grid":1})");
  ASSERT_TRUE(found);
  EXPECT_EQ(*found, std::optional<int64_t>(*id));
  auto none = journal->FindSweep(R"({"grid":2})");
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
  ASSERT_TRUE(journal->FinishRun(*id, "done", 0, "", std::chrono::system_clock::now()));
  ASSERT_TRUE(journal->ReopenRun(*id));
  runs = journal->RecentRuns(1);
  ASSERT_TRUE(runs);
  EXPECT_EQ((*runs)[0].status, "running");
  EXPECT_FALSE((*runs)[0].ended_at);
  EXPECT_FALSE(journal->ReopenRun(*id + 100));
}

TEST(Journal, AnotherProgramsDatabaseIsRefused) {
  TempDir tmp;
  const fs::path other = tmp / "other.db";
  RawExec(other, "CREATE TABLE notes (text TEXT);");
  auto journal = Journal::Open(other);
  ASSERT_FALSE(journal);
  EXPECT_NE(EnglishText(journal.error().what).find("not a headroom journal"), std::string::npos);
  const fs::path tagged = tmp / "tagged.db";
  RawExec(tagged, "PRAGMA application_id = 42; CREATE TABLE t (x);");
  auto j2 = Journal::Open(tagged);
  ASSERT_FALSE(j2);
  EXPECT_NE(EnglishText(j2.error().what).find("application_id 0x2a"), std::string::npos)
      << EnglishText(j2.error().what);
}

TEST(Journal, UnwritablePlaceIsAnErrorNamingThePath) {
  TempDir tmp;
  // A regular file where a directory should be: fails even for root.
  std::ofstream(tmp / "plain-file") << "x";
  auto journal = Journal::Open(tmp / "plain-file/headroom/journal.db");
  ASSERT_FALSE(journal);
  EXPECT_NE(EnglishText(journal.error().what).find((tmp / "plain-file").string()),
            std::string::npos);
  EXPECT_NE(EnglishText(journal.error().what).find("Not a directory"), std::string::npos)
      << EnglishText(journal.error().what);
  // A directory without write permission; root writes anyway, so only checked as a user.
  if (geteuid() != 0) {
    fs::create_directories(tmp / "locked");
    fs::permissions(tmp / "locked", fs::perms::owner_read | fs::perms::owner_exec);
    auto denied = Journal::Open(tmp / "locked/journal.db");
    ASSERT_FALSE(denied);
    EXPECT_NE(EnglishText(denied.error().what).find((tmp / "locked/journal.db").string()),
              std::string::npos);
    EXPECT_NE(EnglishText(denied.error().what).find("Permission denied"), std::string::npos)
        << EnglishText(denied.error().what);
    auto nested = Journal::Open(tmp / "locked/sub/journal.db");
    ASSERT_FALSE(nested);
    EXPECT_NE(EnglishText(nested.error().what).find("mkdir"), std::string::npos);
  }
  // A directory given as the journal itself.
  fs::create_directories(tmp / "a-dir");
  auto is_dir = Journal::Open(tmp / "a-dir");
  ASSERT_FALSE(is_dir);
  EXPECT_NE(EnglishText(is_dir.error().what).find((tmp / "a-dir").string()), std::string::npos);
}

TEST(Journal, LockHeldPastTheTimeoutIsAnError) {
  TempDir tmp;
  const fs::path path = tmp / "journal.db";
  auto journal = Journal::Open(path, JournalOptions{.busy_timeout = milliseconds(100)});
  ASSERT_TRUE(journal);
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  const auto start = std::chrono::steady_clock::now();
  auto run = journal->BeginRun(RunKind::kGuard, {"true"}, kT0);
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(run);
  EXPECT_NE(EnglishText(run.error().what).find(path.string()), std::string::npos);
  EXPECT_NE(EnglishText(run.error().what).find("locked"), std::string::npos)
      << EnglishText(run.error().what);
  EXPECT_GE(waited, milliseconds(90));
  sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(holder);
  EXPECT_TRUE(journal->BeginRun(RunKind::kGuard, {"true"}, kT0));  // free again
}

TEST(Journal, ReadOnlyNeverCreatesOrWrites) {
  TempDir tmp;
  auto missing = Journal::Open(tmp / "nope.db", JournalOptions{.read_only = true});
  ASSERT_FALSE(missing);
  EXPECT_NE(EnglishText(missing.error().what).find((tmp / "nope.db").string()), std::string::npos);
  EXPECT_FALSE(fs::exists(tmp / "nope.db"));
  // An empty file (SQLite's empty database) reads as no runs and stays empty.
  std::ofstream(tmp / "empty.db").close();
  auto empty = Journal::Open(tmp / "empty.db", JournalOptions{.read_only = true});
  ASSERT_TRUE(empty) << EnglishText(empty.error().what);
  EXPECT_EQ(empty->schema_version(), 0);
  EXPECT_TRUE(empty->RecentRuns(5)->empty());
  auto refused = empty->BeginRun(RunKind::kGuard, {"true"}, kT0);
  ASSERT_FALSE(refused);
  EXPECT_NE(EnglishText(refused.error().what).find("read-only"), std::string::npos);
  EXPECT_EQ(fs::file_size(tmp / "empty.db"), 0u);
}

// A guard's notes and a trial's notes are stored as messages (schema version 6), so a reader
// renders them in its own language; the English stays where it always was.
TEST(Journal, RunAndTrialNotesRoundTripAsMessages) {
  TempDir dir;
  const auto path = dir / "journal.db";
  auto journal = Journal::Open(path);
  ASSERT_TRUE(journal) << EnglishText(journal.error().what);
  auto run = journal->BeginRun(RunKind::kGuard, {"python", "train.py"}, kT0);
  ASSERT_TRUE(run);
  const std::vector<Message> notes = {
      Msg("no cgroup: {}", Msg("open({}): {}", "cgroup.procs", ErrnoArg{EACCES})),
      MsgPlural("{} warning", "{} warnings", 2, 2)};
  ASSERT_TRUE(journal->FinishRun(*run, "ok", 0, R"({"notes":["ignored: the messages win"]})",
                                 kT0 + seconds(1), notes));
  Trial trial;
  trial.notes = "pool peak 9.00 GB is over the limit 8.00 GB";
  trial.notes_message =
      Msg("pool peak {} is over the limit {}", GB(9'000'000'000), GB(8'000'000'000));
  trial.started_at = kT0;
  trial.ended_at = kT0 + seconds(1);
  ASSERT_TRUE(journal->AddTrial(*run, trial));
  Trial plain;  // no message: the text is shown as it is
  plain.notes = "exit status 1";
  ASSERT_TRUE(journal->AddTrial(*run, plain));

  auto runs = journal->RecentRuns(1);
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].notes, notes);
  EXPECT_EQ((*runs)[0].summary_json, R"({"notes":["ignored: the messages win"]})");
  auto trials = journal->Trials(*run);
  ASSERT_TRUE(trials);
  ASSERT_EQ(trials->size(), 2u);
  EXPECT_EQ((*trials)[0].notes, "pool peak 9.00 GB is over the limit 8.00 GB");
  EXPECT_EQ((*trials)[0].notes_message, trial.notes_message);
  EXPECT_EQ((*trials)[1].notes_message, Message::Literal("exit status 1"));
}

// Rows written before schema version 6 have no stored notes: a run's notes read as the
// English texts of its summary's "notes", a trial's as its notes text, and a version 5 file
// is read (read-only) without a migration.
TEST(Journal, NotesOfAVersionFiveFileReadAsLiteralText) {
  TempDir dir;
  const auto path = dir / "journal.db";
  int64_t run_id = 0;
  {
    auto journal = Journal::Open(path);
    ASSERT_TRUE(journal) << EnglishText(journal.error().what);
    auto run = journal->BeginRun(RunKind::kGuard, {"true"}, kT0);
    ASSERT_TRUE(run);
    run_id = *run;
    Trial trial;
    trial.notes = "exit status 1";
    ASSERT_TRUE(journal->AddTrial(run_id, trial));
  }
  // What a version 5 headroom left: the notes in English only.
  RawExec(path,
          "UPDATE runs SET status = 'ok', summary_json = "
          "'{\"notes\":[\"no cgroup: permission denied\",7,\"ran as root\"]}';"
          "ALTER TABLE runs DROP COLUMN notes_json; ALTER TABLE trials DROP COLUMN notes_message;"
          "PRAGMA user_version = 5;");
  const std::vector<Message> expected = {Message::Literal("no cgroup: permission denied"),
                                         Message::Literal("ran as root")};
  auto reader = Journal::Open(path, JournalOptions{.read_only = true});
  ASSERT_TRUE(reader) << EnglishText(reader.error().what);
  EXPECT_EQ(reader->schema_version(), 5);
  auto runs = reader->RecentRuns(1);
  ASSERT_TRUE(runs) << EnglishText(runs.error().what);
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].notes, expected);
  auto trials = reader->Trials(run_id);
  ASSERT_TRUE(trials) << EnglishText(trials.error().what);
  ASSERT_EQ(trials->size(), 1u);
  EXPECT_EQ((*trials)[0].notes_message, Message::Literal("exit status 1"));
  // A recording open migrates it; the old rows still read as their text.
  auto writer = Journal::Open(path);
  ASSERT_TRUE(writer) << EnglishText(writer.error().what);
  EXPECT_EQ(writer->schema_version(), kJournalSchemaVersion);
  runs = writer->RecentRuns(1);
  ASSERT_TRUE(runs);
  EXPECT_EQ((*runs)[0].notes, expected);
  trials = writer->Trials(run_id);
  ASSERT_TRUE(trials);
  EXPECT_EQ((*trials)[0].notes_message, Message::Literal("exit status 1"));
}

}  // namespace
}  // namespace headroom
