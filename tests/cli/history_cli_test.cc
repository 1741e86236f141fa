// CLI tests of `headroom history`: a journal seeded through the library in a temporary
// directory, read by the real binary; a table of {args, exit status, output contains}, then
// the JSON and the hostile files (corrupt, newer schema).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_cli.h"
#include "store/journal.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::TempDir;

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::RunCli;
namespace fs = std::filesystem;

const WallTime kT0(seconds(1741944413) + milliseconds(589));  // 2025-03-14T09:26:53.589Z

// Three runs: a guard the guard killed, a guard that ended well, a sweep still running.
void Seed(const std::string& path) {
  auto journal = Journal::Open(path);
  ASSERT_TRUE(journal) << EnglishText(journal.error().what);
  auto killed =
      journal->BeginRun(RunKind::kGuard, {"python", "train.py", "--batch", "32"}, kT0, "spark-1");
  ASSERT_TRUE(killed);
  ASSERT_TRUE(journal->FinishRun(*killed, "killed", 99,
                                 R"({"schema_version":1,"killed_by_guard":true,"polls":812})",
                                 kT0 + seconds(65)));
  // A long command with a newline in one argument: cut in the table, whole in JSON.
  std::vector<std::string> long_cmd = {"bash", "-c", "echo one\necho two"};
  for (int i = 0; i < 20; ++i) long_cmd.push_back("--flag" + std::to_string(i));
  auto ok = journal->BeginRun(RunKind::kGuard, long_cmd, kT0 + seconds(100), "spark-1");
  ASSERT_TRUE(ok);
  ASSERT_TRUE(journal->FinishRun(*ok, "ok", 0, "{}", kT0 + seconds(100) + milliseconds(2500)));
  ASSERT_TRUE(journal->BeginRun(RunKind::kSweep, {"headroom", "sweep"}, kT0 + seconds(200)));
}

struct HistoryCase {
  std::vector<std::string> args;
  int status;
  std::string out_contains;  // "" = not checked
  std::string err_contains;
};

class HistoryCli : public ::testing::Test {
 protected:
  TempDir tmp_;
  // The child sees HOME in the temp dir and no other journal variable, so no case can
  // read or create a journal in the real home.
  std::vector<std::string> Env(const std::string& journal_env = "") const {
    return {"HOME=" + tmp_.File("home"), "XDG_STATE_HOME=", "HEADROOM_JOURNAL=" + journal_env};
  }
  void Check(const std::vector<HistoryCase>& cases, const std::vector<std::string>& env) {
    for (const HistoryCase& c : cases) {
      std::string joined;
      for (const auto& a : c.args) joined += a + " ";
      SCOPED_TRACE(joined);
      const auto r = RunCli(c.args, 20000, env);
      ASSERT_FALSE(r.timed_out);
      EXPECT_EQ(r.status, c.status) << r.out << r.err;
      if (!c.out_contains.empty()) {
        EXPECT_NE(r.out.find(c.out_contains), std::string::npos) << r.out;
      }
      if (!c.err_contains.empty()) {
        EXPECT_NE(r.err.find(c.err_contains), std::string::npos) << r.err;
      }
      if (c.status == 2) {  // one line, prefixed, nothing on stdout
        EXPECT_EQ(r.err.rfind("headroom: history: ", 0), 0u) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
      }
    }
  }
};

TEST_F(HistoryCli, Table) {
  const std::string journal = tmp_.File("j/journal.db");
  Seed(journal);
  const std::string missing = tmp_.File("none/journal.db");
  const std::string home_default = tmp_.File("home/.local/state/headroom/journal.db");
  Check(
      {
          {{"history", "--journal", journal}, 0, "ID  KIND   STARTED (UTC)", ""},
          {{"history", "--journal", journal}, 0, "2025-03-14 09:26:53", ""},
          {{"history", "--journal", journal}, 0, "1 min 05 s", ""},
          {{"history", "--journal", journal}, 0, "2.5 s", ""},
          {{"history", "--journal", journal}, 0, "python train.py --batch 32", ""},
          {{"history", "--journal", journal}, 0, "'echo one?echo two'", ""},
          {{"history", "--journal", journal}, 0, "--flag2 --fla...", ""},
          {{"history", "--journal", journal}, 0, "journal: " + journal, ""},
          {{"history", "--journal", journal, "--limit", "1"}, 0, "running", ""},
          {{"history", "--journal", missing}, 0, "no runs recorded in " + missing, ""},
          {{"history"}, 0, "no runs recorded in " + home_default, ""},
          {{"history", "--limit", "0"}, 2, "", "--limit: '0' must be at least 1"},
          {{"history", "--limit", "many"}, 2, "", "--limit: 'many' is not a whole number"},
          {{"history", "--bogus"}, 2, "", "bogus"},
          {{"history", "--help"}, 0, "--journal", ""},
          {{"--help"}, 0, "history", ""},
      },
      Env());
  // The environment variable names the journal when no flag does.
  Check({{{"history"}, 0, "killed", ""}}, Env(journal));
  // Listing creates nothing: not the missing file, not the default one, nor their folders.
  EXPECT_FALSE(fs::exists(tmp_.File("none")));
  EXPECT_FALSE(fs::exists(tmp_.File("home")));
}

TEST_F(HistoryCli, NewestFirstAndLimited) {
  const std::string journal = tmp_.File("journal.db");
  Seed(journal);
  const auto r = RunCli({"history", "--journal", journal}, 20000, Env());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto sweep = r.out.find("sweep"), ok = r.out.find(" ok "), killed = r.out.find("killed");
  ASSERT_NE(sweep, std::string::npos);
  EXPECT_LT(sweep, ok);
  EXPECT_LT(ok, killed);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 5);  // journal line, header, 3 runs
  const auto one = RunCli({"history", "--journal", journal, "--limit", "2"}, 20000, Env());
  EXPECT_EQ(one.out.find("killed"), std::string::npos) << one.out;
}

TEST_F(HistoryCli, Json) {
  const std::string journal = tmp_.File("journal.db");
  Seed(journal);
  const auto r = RunCli({"history", "--journal", journal, "--json"}, 20000, Env());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << r.out;
  EXPECT_EQ(doc["schema_version"], 1);
  EXPECT_EQ(doc["journal"], journal);
  ASSERT_EQ(doc["runs"].size(), 3u);
  const auto& sweep = doc["runs"][0];
  EXPECT_EQ(sweep["kind"], "sweep");
  EXPECT_EQ(sweep["status"], "running");
  EXPECT_TRUE(sweep["ended_at"].is_null() && sweep["exit_status"].is_null() &&
              sweep["duration_s"].is_null() && sweep["summary"].is_null());
  const auto& ok = doc["runs"][1];
  EXPECT_EQ(ok["command"][2], "echo one\necho two");  // whole, unescaped
  EXPECT_EQ(ok["command"].size(), 23u);
  EXPECT_DOUBLE_EQ(ok["duration_s"].get<double>(), 2.5);
  const auto& killed = doc["runs"][2];
  EXPECT_EQ(killed["id"], 1);
  EXPECT_EQ(killed["host"], "spark-1");
  EXPECT_EQ(killed["exit_status"], 99);
  EXPECT_EQ(killed["started_at"], "2025-03-14T09:26:53.589Z");
  ASSERT_TRUE(killed["summary"].is_object());  // embedded, not a string
  EXPECT_EQ(killed["summary"]["killed_by_guard"], true);
  EXPECT_EQ(killed["summary"]["polls"], 812);

  const std::string missing = tmp_.File("missing.db");
  const auto none = RunCli({"history", "--journal", missing, "--json"}, 20000, Env());
  ASSERT_EQ(none.status, 0) << none.err;
  const auto empty = nlohmann::json::parse(none.out, nullptr, false);
  ASSERT_TRUE(empty.is_object()) << none.out;
  EXPECT_TRUE(empty["runs"].is_array() && empty["runs"].empty());
  EXPECT_FALSE(fs::exists(missing));
}

TEST_F(HistoryCli, EmptyJournal) {
  const std::string journal = tmp_.File("journal.db");
  ASSERT_TRUE(Journal::Open(journal));  // created and migrated, no runs
  Check({{{"history", "--journal", journal}, 0, "no runs recorded in " + journal, ""}}, Env());
  std::ofstream(tmp_.File("zero.db")).close();  // a zero-byte file: SQLite's empty database
  Check({{{"history", "--journal", tmp_.File("zero.db")}, 0, "no runs recorded in", ""}}, Env());
}

TEST_F(HistoryCli, BadJournals) {
  const std::string corrupt = tmp_.File("corrupt.db");
  std::ofstream(corrupt, std::ios::binary) << std::string(2048, '\x5a') << "not sqlite";
  const std::string newer = tmp_.File("newer.db");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(newer.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE runs (id INTEGER); PRAGMA user_version = 9;", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const std::string other = tmp_.File("other.db");
  ASSERT_EQ(sqlite3_open(other.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE notes (t TEXT);", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  Check(
      {
          {{"history", "--journal", corrupt}, 2, "", corrupt + "): file is not a database"},
          {{"history", "--journal", corrupt, "--json"}, 2, "", "file is not a database"},
          {{"history", "--journal", newer},
           2,
           "",
           "journal: open(" + newer + "): schema version 9 is newer than this headroom (" +
               std::to_string(kJournalSchemaVersion) + "); upgrade headroom"},
          {{"history", "--journal", other}, 2, "", "not a headroom journal"},
          {{"history", "--journal", tmp_.File("")}, 2, "", ""},  // a directory
      },
      Env());
}

}  // namespace
}  // namespace headroom

namespace headroom {
namespace {

// An exit status past 32 bits, as another program may store it (the column is an SQLite
// INTEGER, 64 bits): shown whole in the table and in JSON, not cut to 1215752191.
TEST(HistoryCliExitStatus, A64BitExitStatusIsShownWhole) {
  testing::TempDir tmp("history-exit");
  const std::string journal = tmp.File("journal.db");
  {
    auto j = Journal::Open(journal);
    ASSERT_TRUE(j) << EnglishText(j.error().what);
    auto id = j->BeginRun(RunKind::kGuard, {"true"}, kT0, "spark-1");
    ASSERT_TRUE(id);
    ASSERT_TRUE(j->FinishRun(*id, "exited", 0, "{}", kT0 + seconds(1)));
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(journal.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(db, "UPDATE runs SET exit_status = 99999999999", nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(db);
  const std::vector<std::string> env = {"HOME=" + tmp.path().string(), "LANG=C", "LC_ALL=C"};
  const auto table = RunCli({"history", "--journal", journal}, 20000, env);
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("99999999999"), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("1215752191"), std::string::npos) << table.out;
  const auto json = RunCli({"history", "--journal", journal, "--json"}, 20000, env);
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out)["runs"][0]["exit_status"], 99999999999LL) << json.out;
}

}  // namespace
}  // namespace headroom
