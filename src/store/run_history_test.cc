// ReadRunHistory and RunHistoryJson on a real SQLite journal in a temporary directory: a
// missing journal lists nothing and is not created, runs come newest first and limited,
// durations need both times in order, and a summary edited into non-JSON reads as null.
#include "store/run_history.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <string>

#include "testing_files.h"

namespace headroom {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::TempDir;
using testing::WriteFile;

const WallTime kHistoryT0(seconds(1741944413) + milliseconds(589));  // 2025-03-14T09:26:53.589Z

// Two finished guard runs and a sweep still running; the first run's summary is then
// edited by hand into text that is not JSON.
void Seed(const std::filesystem::path& path) {
  auto journal = Journal::Open(path);
  ASSERT_TRUE(journal) << EnglishText(journal.error().what);
  auto first = journal->BeginRun(RunKind::kGuard, {"python", "a.py"}, kHistoryT0, "spark-1");
  ASSERT_TRUE(first);
  ASSERT_TRUE(journal->FinishRun(*first, "killed", 99, R"({"polls":1})", kHistoryT0 + seconds(65)));
  auto second = journal->BeginRun(RunKind::kGuard, {"python", "b.py"}, kHistoryT0 + seconds(100));
  ASSERT_TRUE(second);
  ASSERT_TRUE(journal->FinishRun(*second, "exited", 0, R"({"polls":2})",
                                 kHistoryT0 + seconds(100) + milliseconds(2500)));
  ASSERT_TRUE(journal->BeginRun(RunKind::kSweep, {"headroom", "sweep"}, kHistoryT0 + seconds(200)));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, "UPDATE runs SET summary_json = '{broken' WHERE id = 1", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
}

TEST(RunHistory, AMissingJournalListsNothingAndIsNotCreated) {
  TempDir dir("run-history");
  const auto path = dir / "state" / "journal.db";
  auto runs = ReadRunHistory(path, 20);
  ASSERT_TRUE(runs) << EnglishText(runs.error().what);
  EXPECT_TRUE(runs->empty());
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(dir / "state"));
  const auto json = RunHistoryJson(path, *runs);
  EXPECT_EQ(json.dump(), R"({"schema_version":1,"journal":")" + path.string() + R"(","runs":[]})");
}

TEST(RunHistory, NewestFirstLimitedWithDurationsAndSummaries) {
  TempDir dir("run-history");
  const auto path = dir / "journal.db";
  Seed(path);
  auto two = ReadRunHistory(path, 2);
  ASSERT_TRUE(two) << EnglishText(two.error().what);
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[0].kind, "sweep");
  EXPECT_EQ((*two)[1].command, (std::vector<std::string>{"python", "b.py"}));

  auto all = ReadRunHistory(path, 20);
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ(RunDurationSeconds((*all)[0]), std::nullopt);  // still running
  EXPECT_DOUBLE_EQ(*RunDurationSeconds((*all)[1]), 2.5);
  EXPECT_DOUBLE_EQ(*RunDurationSeconds((*all)[2]), 65.0);

  const auto json = RunHistoryJson(path, *all);
  EXPECT_EQ(json["schema_version"], 1);
  EXPECT_EQ(json.begin().key(), "schema_version");
  const auto& runs = json["runs"];
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_TRUE(runs[0]["ended_at"].is_null() && runs[0]["duration_s"].is_null() &&
              runs[0]["exit_status"].is_null() && runs[0]["summary"].is_null());
  EXPECT_EQ(runs[1]["summary"]["polls"], 2);  // embedded as an object
  EXPECT_EQ(runs[1]["duration_s"], 2.5);
  EXPECT_EQ(runs[2]["summary"], nullptr);  // '{broken' does not parse
  EXPECT_EQ(runs[2]["host"], "spark-1");
  EXPECT_EQ(runs[2]["exit_status"], 99);
  EXPECT_EQ(runs[2]["started_at"], "2025-03-14T09:26:53.589Z");
  std::vector<std::string> keys;
  for (const auto& [key, value] : runs[2].items()) keys.push_back(key);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"id", "kind", "host", "started_at", "ended_at", "duration_s",
                                      "status", "exit_status", "command", "summary"}));
}

TEST(RunHistory, ADurationNeedsBothTimesInOrder) {
  RunRow run;
  run.started_at = "2025-03-14T09:26:53.589Z";
  EXPECT_EQ(RunDurationSeconds(run), std::nullopt);
  run.ended_at = "2025-03-14T09:26:50.000Z";  // before the start: a clock set back
  EXPECT_EQ(RunDurationSeconds(run), std::nullopt);
  run.ended_at = "yesterday";
  EXPECT_EQ(RunDurationSeconds(run), std::nullopt);
  run.ended_at = "2025-03-14T09:27:53.589Z";
  EXPECT_DOUBLE_EQ(*RunDurationSeconds(run), 60.0);
}

TEST(RunHistory, AFileThatIsNoJournalIsAnError) {
  TempDir dir("run-history");
  const auto path = dir / "journal.db";
  WriteFile(path, "this is not an SQLite database, but long enough to have a header......");
  auto runs = ReadRunHistory(path, 20);
  EXPECT_FALSE(runs);
}

}  // namespace
}  // namespace headroom
