// RunGuardedJob: the journal's row around a guarded job (begun with the guard's record,
// finished with the summary), a journal that cannot be had as a note, an --events file that
// cannot be opened as an error. Each run is in a forked helper, as in guard_test.cc: the
// guard changes process-wide state (priority, subreaper, locked pages).
#include "guard/guarded_run.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <string>

#include "base/message.h"
#include "guard/guard_record.h"
#include "store/journal.h"
#include "testing_files.h"
#include "testing_helper_process.h"

namespace headroom {
namespace {

using testing::TempDir;

using testing::InHelper;

GuardedRunOptions RunOptions(std::vector<std::string> command) {
  GuardedRunOptions o;
  o.guard.command = command;
  o.guard.min_available_bytes = 1;  // never a kill
  o.guard.use_cgroup = false;
  o.recorded_command = std::move(command);
  o.guard_start.guard_pid = 4242;
  o.guard_start.kill_below_bytes = 1;
  return o;
}

TEST(GuardedRun, TheJournalRowIsBegunWithTheRecordAndFinishedWithTheSummary) {
  TempDir dir("guarded-run");
  const auto path = dir / "journal.db";
  EXPECT_EQ(InHelper([&]() -> std::string {
              auto o = RunOptions({"sh", "-c", "exit 3"});
              o.journal = Result<std::filesystem::path>(path);
              auto r = RunGuardedJob(SysRoot("/"), o, nullptr);
              if (!r) return EnglishText(r.error().what);
              if (r->exit_status != 3) return "exit status " + std::to_string(r->exit_status);
              for (const auto& n : r->notes) {  // the guard's own notes depend on the machine
                if (EnglishText(n).rfind("not recorded", 0) == 0) return EnglishText(n);
              }
              return "";
            }),
            "");
  auto journal = Journal::Open(path, JournalOptions{.read_only = true});
  ASSERT_TRUE(journal) << EnglishText(journal.error().what);
  auto runs = journal->RecentRuns(10);
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->size(), 1u);
  const RunRow& run = runs->front();
  EXPECT_EQ(run.kind, "guard");
  EXPECT_EQ(run.command, (std::vector<std::string>{"sh", "-c", "exit 3"}));
  EXPECT_EQ(run.status, "exited");
  EXPECT_EQ(run.exit_status, 3);
  ASSERT_TRUE(run.summary_json);
  EXPECT_NE(run.summary_json->find("\"schema_version\":1"), std::string::npos) << *run.summary_json;
  auto events = journal->Events(run.id);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].type, "start");
  EXPECT_NE((*events)[0].data_json.find("\"guard_pid\":4242"), std::string::npos);
}

// The start record names the step records the job writes: `headroom export` counts its steps
// from them (docs/export.md), whether the file is the user's or the private folder's.
TEST(GuardedRun, TheStartRecordNamesTheStepRecords) {
  TempDir dir("guarded-run-records");
  const auto path = dir / "journal.db";
  for (const std::string& named : {(dir / "mine.jsonl").string(), std::string()}) {
    EXPECT_EQ(InHelper([&]() -> std::string {
                auto o = RunOptions({"sh", "-c", "test -n \"$HEADROOM_STEP_RECORDS\""});
                o.journal = Result<std::filesystem::path>(path);
                o.companion = GuardedRunOptions::CompanionRequest{};  // clang: no emplace()
                o.companion->tmp_dir = dir.path().string();
                o.companion->step_records = named;
                auto r = RunGuardedJob(SysRoot("/"), o, nullptr);
                if (!r) return EnglishText(r.error().what);
                return r->exit_status == 0 ? "" : "exit status " + std::to_string(r->exit_status);
              }),
              "");
  }
  auto journal = Journal::Open(path, JournalOptions{.read_only = true});
  ASSERT_TRUE(journal) << EnglishText(journal.error().what);
  auto runs = journal->RecentRuns(10);
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->size(), 2u);
  std::vector<std::string> named;
  for (const RunRow& run : *runs) {
    auto events = journal->Events(run.id);
    ASSERT_TRUE(events);
    ASSERT_FALSE(events->empty());
    const auto record = ParseGuardStartJson((*events)[0].data_json);
    ASSERT_TRUE(record) << (*events)[0].data_json;
    named.push_back(record->step_records);
  }
  // Newest first: the private folder's file, then the user's.
  EXPECT_TRUE(named[0].ends_with("/steps.jsonl")) << named[0];
  EXPECT_NE(named[0].find("headroom-companion-"), std::string::npos) << named[0];
  EXPECT_EQ(named[1], (dir / "mine.jsonl").string());
}

TEST(GuardedRun, AJournalThatCannotBeHadIsANoteAndTheJobStillRuns) {
  EXPECT_EQ(InHelper([&]() -> std::string {
              auto o = RunOptions({"true"});
              o.journal = Result<std::filesystem::path>(Error{Msg("no place for the journal")});
              auto r = RunGuardedJob(SysRoot("/"), o, nullptr);
              if (!r) return EnglishText(r.error().what);
              if (r->exit_status != 0) return "exit status " + std::to_string(r->exit_status);
              if (r->notes.empty()) return "no note";
              return EnglishText(r->notes.back());
            }),
            "not recorded in the journal: no place for the journal");
}

TEST(GuardedRun, AnEventsFileThatCannotBeOpenedIsAnErrorBeforeAnythingRuns) {
  TempDir dir("guarded-run");
  auto o = RunOptions({"true"});
  o.events_path = (dir / "missing" / "events.jsonl").string();
  o.journal = Result<std::filesystem::path>(dir / "journal.db");
  auto r = RunGuardedJob(SysRoot("/"), o, nullptr);
  ASSERT_FALSE(r);
  EXPECT_EQ(EnglishText(r.error().what).rfind("--events: cannot open " + o.events_path + ": ", 0),
            0u)
      << EnglishText(r.error().what);
  EXPECT_FALSE(std::filesystem::exists(dir / "journal.db"));
}

}  // namespace
}  // namespace headroom
