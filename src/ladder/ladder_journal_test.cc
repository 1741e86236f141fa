// LadderJournal tests: the ladder's rows in a real SQLite journal (moved from
// store/journal_test.cc, so store's tests do not reach up into ladder/).
#include "ladder/ladder_journal.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <string>

#include "base/message.h"
#include "store/journal.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::TempDir;

// Runs SQL on `path` through a raw connection (the test's way to build an old file).
void RawLadderExec(const std::filesystem::path& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

// A ladder for `job` (matched by its name) with `symptom`, as `ladder start` makes one.
LadderRow NewLadder(const std::string& job, const std::string& symptom) {
  LadderRow row;
  row.job = job;
  row.symptom = symptom;
  row.match_text = job;
  return row;
}

// A ladder entry's text is stored as a message value (id and arguments) beside its English:
// read back, it is the same message, so a reader renders it in its own language.
TEST(LadderJournal, LadderEntryTextRoundTripsAsAMessage) {
  TempDir dir;
  const auto path = dir / "journal.db";
  auto journal = Journal::Open(path);
  ASSERT_TRUE(journal) << EnglishText(journal.error().what);
  LadderJournal ladders(*journal);
  const LadderRow row = NewLadder("myjob", "load");
  const Message text = JoinMessages(
      {Msg("between runs, as root: {} (or: headroom ladder apply JOB)", "sync"),
       Msg("plan: {0} {1}, batch {2} x seq {3}: peak {4} of a {5} budget ({6})", "llama-3.1-8b",
           "lora", 8, 65536, GB(50'000'000'000), GB(40'000'000'000), Msg("does not fit"))},
      "; ");
  auto id = ladders.Start(row, {{1, "entered", text, std::nullopt, "", "{}", ""}},
                          std::chrono::system_clock::now());
  ASSERT_TRUE(id) << EnglishText(id.error().what);
  auto entries = ladders.Entries(*id);
  ASSERT_TRUE(entries);
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].text, text);
  // The text column keeps the English, as every version wrote it.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT text FROM ladder_entries", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))),
            "between runs, as root: sync (or: headroom ladder apply JOB); plan: llama-3.1-8b lora, "
            "batch 8 x seq 65536: peak 50.00 GB of a 40.00 GB budget (does not fit)");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

// Rows written before schema version 4 have no stored message: they read as the literal
// text they hold, and a version 3 file can still be read (read-only) without a migration.
TEST(LadderJournal, LadderEntriesOfAVersionThreeFileReadAsLiteralText) {
  TempDir dir;
  const auto path = dir / "journal.db";
  {
    auto journal = Journal::Open(path);
    ASSERT_TRUE(journal) << EnglishText(journal.error().what);
    LadderJournal ladders(*journal);
    ASSERT_TRUE(ladders.Start(NewLadder("old", "step"),
                              {{1, "entered", Msg("x"), std::nullopt, "", "{}", ""}},
                              std::chrono::system_clock::now()));
  }
  // What a version 3 headroom left: the English text and no message column.
  RawLadderExec(
      path,
      "UPDATE ladder_entries SET text = 'Cached 1.00 GB: a flush would free up to 1.00 GB';"
      "ALTER TABLE ladder_entries DROP COLUMN text_message;"
      "ALTER TABLE ladders DROP COLUMN plan_request;"
      "ALTER TABLE runs DROP COLUMN notes_json; ALTER TABLE trials DROP COLUMN notes_message;"
      "PRAGMA user_version = 3;");
  auto reader = Journal::Open(path, JournalOptions{.read_only = true});
  ASSERT_TRUE(reader) << EnglishText(reader.error().what);
  EXPECT_EQ(reader->schema_version(), 3);
  LadderJournal ladders(*reader);
  auto open = ladders.Open();
  ASSERT_TRUE(open);
  ASSERT_EQ(open->size(), 1u);
  auto entries = ladders.Entries(open->front().id);
  ASSERT_TRUE(entries) << EnglishText(entries.error().what);
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].text,
            Message::Literal("Cached 1.00 GB: a flush would free up to 1.00 GB"));
  // A recording open migrates it; the old row still reads as its text.
  auto writer = Journal::Open(path);
  ASSERT_TRUE(writer) << EnglishText(writer.error().what);
  EXPECT_EQ(writer->schema_version(), kJournalSchemaVersion);
  LadderJournal migrated(*writer);
  entries = migrated.Entries(open->front().id);
  ASSERT_TRUE(entries);
  EXPECT_EQ(EnglishText((*entries)[0].text), "Cached 1.00 GB: a flush would free up to 1.00 GB");
}

}  // namespace
}  // namespace headroom
