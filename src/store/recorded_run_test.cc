// RecordedRun against a real SQLite file in a temporary directory: the rows it writes are
// the journal's own (read back through Journal), an unfinished run stays "running", a run
// finishes once, a reopened run is running again, and an owned journal survives a move.
#include "store/recorded_run.h"

#include <gtest/gtest.h>

#include <optional>
#include <utility>

#include "testing_files.h"

namespace headroom {
namespace {

using testing::TempDir;

RunRow OnlyRun(Journal& journal, int64_t id) {
  auto run = journal.FindRun(id);
  EXPECT_TRUE(run) << EnglishText(run.error().what);
  EXPECT_TRUE(*run);
  return run && *run ? **run : RunRow{};
}

TEST(RecordedRun, OpenBeginsARunThatOwnsItsJournal) {
  TempDir dir("recorded-run");
  const auto path = dir / "state" / "journal.db";
  std::optional<RecordedRun> run;
  {
    auto opened = RecordedRun::Open(path, RunKind::kWatch, {"headroom", "watch"});
    ASSERT_TRUE(opened) << EnglishText(opened.error().what);
    run.emplace(std::move(*opened));  // a move keeps the journal it owns
  }
  ASSERT_TRUE(run->AddEvent("files", R"({"samples":"/tmp/s.csv"})"));
  auto done = run->Finish("stopped", 0, R"({"rows":3})");
  ASSERT_TRUE(done) << EnglishText(done.error().what);
  EXPECT_TRUE(*done);
  EXPECT_TRUE(run->finished());

  auto journal = Journal::Open(path, JournalOptions{.read_only = true});
  ASSERT_TRUE(journal) << EnglishText(journal.error().what);
  const RunRow row = OnlyRun(*journal, run->id());
  EXPECT_EQ(row.kind, "watch");
  EXPECT_EQ(row.command, (std::vector<std::string>{"headroom", "watch"}));
  EXPECT_EQ(row.status, "stopped");
  EXPECT_EQ(row.exit_status, 0);
  EXPECT_EQ(row.summary_json, R"({"rows":3})");
  EXPECT_TRUE(row.ended_at);
  auto events = journal->Events(run->id());
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].type, "files");
  EXPECT_EQ((*events)[0].monotonic_s, 0);
  EXPECT_EQ((*events)[0].data_json, R"({"samples":"/tmp/s.csv"})");
}

TEST(RecordedRun, AnUnfinishedRunStaysRunning) {
  TempDir dir("recorded-run");
  auto journal = Journal::Open(dir / "journal.db");
  ASSERT_TRUE(journal) << EnglishText(journal.error().what);
  int64_t id = 0;
  {
    auto run = RecordedRun::Begin(*journal, RunKind::kGuard, {"python", "train.py"});
    ASSERT_TRUE(run) << EnglishText(run.error().what);
    id = run->id();
  }
  const RunRow row = OnlyRun(*journal, id);
  EXPECT_EQ(row.kind, "guard");
  EXPECT_EQ(row.status, "running");
  EXPECT_FALSE(row.ended_at);
  EXPECT_FALSE(row.exit_status);
  EXPECT_FALSE(row.summary_json);
  auto running = journal->RunningRuns(10);
  ASSERT_TRUE(running);
  ASSERT_EQ(running->size(), 1u);
  EXPECT_EQ(running->front().id, id);
}

TEST(RecordedRun, FinishesOnceAndTheFirstStatusStays) {
  TempDir dir("recorded-run");
  auto journal = Journal::Open(dir / "journal.db");
  ASSERT_TRUE(journal) << EnglishText(journal.error().what);
  auto run = RecordedRun::Begin(*journal, RunKind::kGuard, {"--pid", "42"});
  ASSERT_TRUE(run) << EnglishText(run.error().what);
  ASSERT_TRUE(run->Finish("error", 2, ""));
  auto again = run->Finish("exited", 0, R"({"killed":false})");
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again);
  const RunRow row = OnlyRun(*journal, run->id());
  EXPECT_EQ(row.status, "error");
  EXPECT_EQ(row.exit_status, 2);
  EXPECT_EQ(row.command, (std::vector<std::string>{"--pid", "42"}));
}

TEST(RecordedRun, AReopenedSweepIsRunningAgainAndKeepsItsTrials) {
  TempDir dir("recorded-run");
  auto journal = Journal::Open(dir / "journal.db");
  ASSERT_TRUE(journal) << EnglishText(journal.error().what);
  int64_t id = 0;
  {
    auto run = RecordedRun::Begin(*journal, RunKind::kSweep, {"train", "{batch}"}, R"({"k":1})");
    ASSERT_TRUE(run) << EnglishText(run.error().what);
    id = run->id();
    Trial trial;
    trial.config_json = R"({"batch":4})";
    trial.peak_bytes = 1000;
    ASSERT_TRUE(run->AddTrial(trial));
    ASSERT_TRUE(run->Finish("interrupted", 130, "{}"));
  }
  auto found = journal->FindSweep(R"({"k":1})");
  ASSERT_TRUE(found);
  EXPECT_EQ(*found, id);
  auto reopened = RecordedRun::Reopen(*journal, id);
  ASSERT_TRUE(reopened) << EnglishText(reopened.error().what);
  EXPECT_EQ(reopened->id(), id);
  EXPECT_FALSE(reopened->finished());
  EXPECT_EQ(OnlyRun(*journal, id).status, "running");
  auto trials = journal->Trials(id);
  ASSERT_TRUE(trials);
  ASSERT_EQ(trials->size(), 1u);
  EXPECT_EQ((*trials)[0].config_json, R"({"batch":4})");
  ASSERT_TRUE(reopened->Finish("done", 0, "{}"));
  EXPECT_EQ(OnlyRun(*journal, id).status, "done");
}

TEST(RecordedRun, ErrorsNameTheJournal) {
  TempDir dir("recorded-run");
  testing::WriteFile(dir / "not-a-db", "this is not an SQLite file, not even close to one\n");
  auto opened = RecordedRun::Open(dir / "not-a-db", RunKind::kWatch, {"headroom", "watch"});
  ASSERT_FALSE(opened);
  auto journal = Journal::Open(dir / "journal.db");
  ASSERT_TRUE(journal) << EnglishText(journal.error().what);
  EXPECT_FALSE(RecordedRun::Reopen(*journal, 99));
}

}  // namespace
}  // namespace headroom
