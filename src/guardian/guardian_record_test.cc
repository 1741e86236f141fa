#include "guardian/guardian_record.h"

#include <gtest/gtest.h>

#include <string>

#include "store/journal.h"
#include "store/run_history.h"
#include "testing_files.h"

namespace headroom {
namespace {

GuardianEvent RecordTestEvent(std::string type) {
  return GuardianEvent{std::move(type), Msg("victim {} (pid {})", std::string("python3"), 42),
                       nlohmann::ordered_json{{"available_bytes", 1024}}};
}

TEST(GuardianRecord, EventsGoToTheJournalAndTheEventsFile) {
  testing::TempDir dir("guardian-record");
  const auto journal = dir / "journal.db";
  std::FILE* events = std::fopen((dir / "events.jsonl").c_str(), "a");
  ASSERT_NE(events, nullptr);
  std::vector<std::string> notes;
  {
    const auto note = [&](const Message& m) { notes.push_back(EnglishText(m)); };
    const int64_t id = BeginGuardianRun(journal, {"guardian", "--dry-run"}, SysRoot("/"),
                                        4ULL << 30, 8ULL << 30, note);
    ASSERT_GT(id, 0);
    GuardianRecord record(journal, id, events, note);
    // Nothing to record yet: the journal is not open.
    EXPECT_FALSE(record.journal_open());
    record.Event(RecordTestEvent("warn"), 1.0);
    record.Event(RecordTestEvent("kill"), 2.0);
    record.Event(RecordTestEvent("kill"), 3.0);
    EXPECT_TRUE(record.journal_open());
    GuardianCounts counts;
    counts.kills = 2;
    record.Finish(counts);
  }
  std::fclose(events);
  EXPECT_TRUE(notes.empty());
  const std::string lines = testing::Slurp(dir / "events.jsonl");
  EXPECT_TRUE(testing::Contains(lines, "\"type\":\"kill\""));
  EXPECT_TRUE(testing::Contains(lines, "\"message\":\"victim python3 (pid 42)\"")) << lines;
  auto j = Journal::Open(journal, JournalOptions{.read_only = true});
  ASSERT_TRUE(j);
  auto runs = j->RecentRuns(5);
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].kind, "guardian");
  EXPECT_EQ((*runs)[0].status, "stopped");
  auto totals = j->Totals();
  ASSERT_TRUE(totals);
  EXPECT_EQ(totals->guardian_kills, 2);
  EXPECT_EQ(totals->guardian_warnings, 1);
  EXPECT_EQ(totals->guard_runs, 0);  // a guardian run is not a guarded run
  // history shows the run's events under it.
  auto history = ReadRunHistory(journal, 5);
  ASSERT_TRUE(history);
  ASSERT_EQ(history->size(), 1u);
  ASSERT_EQ((*history)[0].notes.size(), 3u);
  EXPECT_TRUE(
      testing::Contains(EnglishText((*history)[0].notes[2]), " kill: victim python3 (pid 42)"))
      << EnglishText((*history)[0].notes[2]);
}

// A journal that cannot be opened and an events file on a full disk: each said once, and
// the guardian goes on (the loop never sees an error).
TEST(GuardianRecord, AFullDiskAndAnUnopenableJournalAreEachSaidOnce) {
  testing::TempDir dir("guardian-full");
  testing::WriteFile(dir / "blocker", "a file where the journal's folder should be");
  std::FILE* full = std::fopen("/dev/full", "a");
  if (full == nullptr) GTEST_SKIP() << "no /dev/full here";
  std::vector<std::string> notes;
  {
    const auto note = [&](const Message& m) { notes.push_back(EnglishText(m)); };
    const auto journal = dir / "blocker" / "journal.db";
    EXPECT_EQ(BeginGuardianRun(journal, {"guardian"}, SysRoot("/"), 1, 2, note), 0);
    // A run id the journal does not have (the file was replaced since): said once too.
    GuardianRecord record(journal, 7, full, note);
    for (int i = 0; i < 3; ++i) record.Event(RecordTestEvent("warn"), i);
    record.Finish(GuardianCounts{});
  }
  std::fclose(full);
  std::string all;
  for (const auto& n : notes) all += n + "\n";
  ASSERT_EQ(notes.size(), 3u) << all;
  EXPECT_TRUE(testing::Contains(notes[0], "journal")) << notes[0];
  EXPECT_TRUE(testing::Contains(notes[1], "journal")) << notes[1];
  EXPECT_TRUE(testing::Contains(notes[2], "write(--events): No space left on device")) << notes[2];
}

// The run `headroom guardian` began is the one the worker's events go to: top lists it from
// the start, and the journal closes in between.
TEST(GuardianRecord, TheWorkerContinuesTheRunBegunBeforeIt) {
  testing::TempDir dir("guardian-continue");
  const auto journal = dir / "journal.db";
  const int64_t id =
      BeginGuardianRun(journal, {"guardian"}, SysRoot("/"), 1ULL << 30, 2ULL << 30, nullptr);
  ASSERT_GT(id, 0);
  {
    auto j = Journal::Open(journal, JournalOptions{.read_only = true});
    ASSERT_TRUE(j);
    auto runs = j->RecentRuns(5);
    ASSERT_TRUE(runs);
    ASSERT_EQ(runs->size(), 1u);
    EXPECT_EQ((*runs)[0].status, "running");
  }
  {
    GuardianRecord record(journal, id, nullptr, nullptr);
    record.Event(RecordTestEvent("kill"), 1.0);
    GuardianCounts counts;
    counts.kills = 1;
    record.Finish(counts);
  }
  auto j = Journal::Open(journal, JournalOptions{.read_only = true});
  ASSERT_TRUE(j);
  auto runs = j->RecentRuns(5);
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].id, id);
  EXPECT_EQ((*runs)[0].status, "stopped");
  EXPECT_EQ(j->Totals()->guardian_kills, 1);
}

}  // namespace
}  // namespace headroom
