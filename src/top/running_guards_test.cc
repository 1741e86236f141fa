#include "top/running_guards.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>

#include "guard/guard_record.h"
#include "sys/processes.h"
#include "testing_files.h"

namespace headroom {
namespace {

RunRow RunOf(int64_t id, std::string kind, std::string status) {
  RunRow r;
  r.id = id;
  r.kind = std::move(kind);
  r.status = std::move(status);
  r.started_at = "2026-09-21T10:00:00.000Z";
  r.command = {"python", "train.py"};
  return r;
}

EventRow Start(int64_t run, pid_t pid, std::optional<uint64_t> ticks, std::string host) {
  EventRow e;
  e.run_id = run;
  e.type = "start";
  e.data_json =
      GuardStartJson(GuardStartRecord{pid, ticks, std::move(host), 10ULL << 30, 20ULL << 30, ""});
  return e;
}

TEST(TopGuards, OnlyRunningRunsWithALiveGuardOnThisHost) {
  const std::vector<RunRow> runs = {RunOf(9, "guard", "running"), RunOf(8, "guard", "exited"),
                                    RunOf(7, "sweep", "running"), RunOf(6, "guard", "running"),
                                    RunOf(5, "guard", "running"), RunOf(4, "guard", "running"),
                                    RunOf(3, "guard", "running"), RunOf(2, "watch", "running")};
  std::map<int64_t, std::vector<EventRow>> events = {
      {9, {Start(9, 900, 111, "spark-1")}},
      {8, {Start(8, 800, 111, "spark-1")}},
      {7, {Start(7, 700, 111, "spark-1")}},  // a sweep guards its trials
      {6, {}},                               // an older headroom: no record
      {5, {Start(5, 500, 111, "spark-2")}},  // another host's run
      {4, {Start(4, 400, 222, "spark-1")}},  // its guard is gone
      {3,
       {EventRow{0, 3, "start", 0, "", "{\"pid\":1}"},
        Start(3, 300, std::nullopt, "")}},          // no host known
      {2, {EventRow{0, 2, "files", 0, "", "{}"}}},  // watch without --guard: no record
  };
  std::vector<pid_t> asked;
  const auto alive = [&](pid_t pid, std::optional<uint64_t>) {
    asked.push_back(pid);
    return pid != 400;
  };
  const auto found = FindRunningGuards(
      runs, [&](int64_t id) { return events[id]; }, "spark-1", alive);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].run_id, 9);
  EXPECT_EQ(found[0].kind, "guard");
  EXPECT_EQ(found[0].guard_pid, 900);
  EXPECT_EQ(found[0].kill_below_bytes, 10ULL << 30);
  EXPECT_EQ(found[0].warn_below_bytes, 20ULL << 30);
  EXPECT_EQ(found[0].command, (std::vector<std::string>{"python", "train.py"}));
  EXPECT_EQ(found[1].run_id, 7);
  EXPECT_EQ(found[1].kind, "sweep");
  EXPECT_EQ(found[2].run_id, 3);  // the first "start" was not a record; the second is
  EXPECT_EQ(asked, (std::vector<pid_t>{900, 700, 400, 300}));  // other hosts' pids never looked up
}

TEST(TopGuards, AResumedSweepIsKnownByItsNewestRecord) {
  // The first sweep process died (SIGKILL: its run stayed "running"); a rerun reopened the
  // run and wrote its own record. Only the newest names the live guard.
  const std::vector<RunRow> runs = {RunOf(4, "sweep", "running")};
  EventRow first = Start(4, 400, 111, "spark-1");
  EventRow trial{0, 4, "trial-start", 0, "", "{\"config\":{\"batch\":1}}"};
  EventRow second = Start(4, 401, 222, "spark-1");
  const std::vector<EventRow> events = {first, trial, second};
  std::vector<pid_t> asked;
  const auto alive = [&](pid_t pid, std::optional<uint64_t>) {
    asked.push_back(pid);
    return true;
  };
  const auto found = FindRunningGuards(
      runs, [&](int64_t) { return events; }, "spark-1", alive);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].guard_pid, 401);
  EXPECT_EQ(asked, (std::vector<pid_t>{401}));
}

TEST(TopGuards, AliveMeansTheSamePidAndStartTime) {
  const SysRoot real(std::filesystem::path("/"));
  const auto self = ReadProcStat(real, ::getpid());
  ASSERT_TRUE(self);
  EXPECT_TRUE(GuardProcessAlive(real, ::getpid(), self->starttime_ticks));
  EXPECT_TRUE(GuardProcessAlive(real, ::getpid(), std::nullopt));
  EXPECT_FALSE(GuardProcessAlive(real, ::getpid(), self->starttime_ticks + 1));  // a reused pid

  testing::TempDir dir("top-guards");
  std::filesystem::create_directories(dir / "proc/77");
  std::filesystem::create_directories(dir / "proc/78");
  testing::WriteFile(dir / "proc/77/stat",
                     "77 (headroom) S 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5555 0 0\n");
  testing::WriteFile(dir / "proc/78/stat",
                     "78 (headroom) Z 1 78 78 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5555 0 0\n");
  const SysRoot fixture(dir.path());
  EXPECT_TRUE(GuardProcessAlive(fixture, 77, 5555));
  EXPECT_FALSE(GuardProcessAlive(fixture, 78, 5555));  // a zombie guard guards nothing
  EXPECT_FALSE(GuardProcessAlive(fixture, 79, std::nullopt));
}

TEST(TopGuards, ReaderFollowsTheJournalFile) {
  testing::TempDir dir("top-guards-journal");
  const auto path = dir / "journal.db";
  const SysRoot real(std::filesystem::path("/"));
  RunningGuardReader reader(path, real, "spark-1");
  std::string note = "x";
  EXPECT_TRUE(reader.Read(note).empty());  // no journal yet: nothing, and no complaint
  EXPECT_EQ(note, "");
  EXPECT_FALSE(std::filesystem::exists(path));  // and not created by reading

  auto journal = Journal::Open(path);
  ASSERT_TRUE(journal) << EnglishText(journal.error().what);
  auto id = journal->BeginRun(RunKind::kGuard, {"sleep", "60"}, std::chrono::system_clock::now());
  ASSERT_TRUE(id);
  const auto self = ReadProcStat(real, ::getpid());
  ASSERT_TRUE(self);
  ASSERT_TRUE(journal->AddEvent(
      *id, "start", 0, std::chrono::system_clock::now(),
      GuardStartJson({::getpid(), self->starttime_ticks, "spark-1", 1ULL << 30, 2ULL << 30, ""})));
  auto guards = reader.Read(note);
  ASSERT_EQ(guards.size(), 1u) << note;
  EXPECT_EQ(guards[0].run_id, *id);
  EXPECT_EQ(guards[0].guard_pid, ::getpid());
  // A long job's guard stays found behind many newer finished runs (a day of sweeps).
  for (int i = 0; i < 300; ++i) {
    auto later =
        journal->BeginRun(RunKind::kWatch, {"headroom", "watch"}, std::chrono::system_clock::now());
    ASSERT_TRUE(later);
    ASSERT_TRUE(journal->FinishRun(*later, "stopped", 0, "{}", std::chrono::system_clock::now()));
  }
  guards = reader.Read(note);
  ASSERT_EQ(guards.size(), 1u) << note;
  EXPECT_EQ(guards[0].run_id, *id);
  ASSERT_TRUE(journal->FinishRun(*id, "exited", 0, "{}", std::chrono::system_clock::now()));
  EXPECT_TRUE(reader.Read(note).empty());  // the same connection sees the finish
}

}  // namespace
}  // namespace headroom
