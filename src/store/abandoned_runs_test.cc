// Abandoned runs against a real SQLite journal and real processes: a "running" run whose
// recorded process is gone (or is another process with its PID) reads as abandoned; a live
// one, another host's, one without a record and a finished one keep their status.
#include "store/abandoned_runs.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <string>

#include "store/recorded_run.h"
#include "sys/processes.h"
#include "testing_files.h"

namespace headroom {
namespace {

using testing::TempDir;

std::string StartJson(pid_t pid, std::optional<uint64_t> ticks, const std::string& host) {
  return "{\"guard_pid\":" + std::to_string(pid) +
         ",\"guard_start_ticks\":" + (ticks ? std::to_string(*ticks) : std::string("null")) +
         ",\"host\":\"" + host + "\",\"kill_below_bytes\":1,\"warn_below_bytes\":2}";
}

pid_t DeadPid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);
  return pid;
}

TEST(AbandonedRuns, ARunningRunWhoseProcessIsGoneReadsAsAbandoned) {
  TempDir dir("abandoned");
  const auto path = dir / "journal.db";
  const auto self = ReadProcStat(SysRoot("/"), getpid());
  ASSERT_TRUE(self);
  const pid_t dead = DeadPid();
  std::map<std::string, int64_t> ids;
  auto add = [&](const std::string& name, const std::string& start, bool finish) {
    auto run = RecordedRun::Open(path, RunKind::kGuard, {"headroom", "guard", name});
    ASSERT_TRUE(run) << EnglishText(run.error().what);
    if (!start.empty()) {
      ASSERT_TRUE(run->AddEvent("start", start));
    }
    if (finish) {
      ASSERT_TRUE(run->Finish("exited", 0, "{}"));
    }
    ids[name] = run->id();
  };
  add("alive", StartJson(getpid(), self->starttime_ticks, "here"), false);
  add("dead", StartJson(dead, std::nullopt, "here"), false);
  add("reused", StartJson(getpid(), self->starttime_ticks + 1, "here"), false);
  add("elsewhere", StartJson(dead, std::nullopt, "there"), false);
  add("no-record", "", false);
  add("finished", StartJson(dead, std::nullopt, "here"), true);
  // A resumed run: the newest record counts (an old dead process, then this live one).
  {
    auto run = RecordedRun::Open(path, RunKind::kSweep, {"headroom", "sweep"});
    ASSERT_TRUE(run);
    ASSERT_TRUE(run->AddEvent("start", StartJson(dead, std::nullopt, "here")));
    ASSERT_TRUE(run->AddEvent("start", StartJson(getpid(), self->starttime_ticks, "here")));
    ids["resumed"] = run->id();
  }

  auto journal = Journal::Open(path, JournalOptions{.read_only = true});
  ASSERT_TRUE(journal);
  auto runs = journal->RecentRuns(100);
  ASSERT_TRUE(runs);
  MarkAbandonedRuns(*journal, *runs, "here", [](pid_t pid, std::optional<uint64_t> ticks) {
    return ProcessAlive(SysRoot("/"), pid, ticks);
  });
  std::map<int64_t, std::string> status;
  for (const RunRow& r : *runs) status[r.id] = r.status;
  EXPECT_EQ(status[ids["alive"]], "running");
  EXPECT_EQ(status[ids["dead"]], "abandoned");
  EXPECT_EQ(status[ids["reused"]], "abandoned");
  EXPECT_EQ(status[ids["elsewhere"]], "running");
  EXPECT_EQ(status[ids["no-record"]], "running");
  EXPECT_EQ(status[ids["finished"]], "exited");
  EXPECT_EQ(status[ids["resumed"]], "running");
  // Reading changed nothing in the journal.
  auto again = journal->FindRun(ids["dead"]);
  ASSERT_TRUE(again && *again);
  EXPECT_EQ((*again)->status, "running");
}

TEST(AbandonedRuns, AStartRecordWithoutAProcessNamesNoOwner) {
  EXPECT_FALSE(ParseRunOwner("not json"));
  EXPECT_FALSE(ParseRunOwner("{}"));
  EXPECT_FALSE(ParseRunOwner(R"({"guard_pid":0})"));
  EXPECT_FALSE(ParseRunOwner(R"({"guard_pid":-4})"));
  EXPECT_FALSE(ParseRunOwner(R"({"guard_pid":"12"})"));
  const auto owner = ParseRunOwner(R"({"guard_pid":12,"guard_start_ticks":null,"host":"h"})");
  ASSERT_TRUE(owner);
  EXPECT_EQ(owner->pid, 12);
  EXPECT_FALSE(owner->start_ticks);
  EXPECT_EQ(owner->host, "h");
}

}  // namespace
}  // namespace headroom
