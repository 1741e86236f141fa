#include "export/guarded_jobs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "guard/guard_record.h"
#include "store/journal.h"
#include "sys/processes.h"
#include "testing_files.h"

namespace headroom {
namespace {

std::string StepLine(int rank, int step, double wall) {
  return "{\"schema\":\"headroom.step/1\",\"kind\":\"step\",\"pid\":5,\"rank\":" +
         std::to_string(rank) + ",\"wall\":" + std::to_string(wall) +
         ",\"mono\":1,\"step\":" + std::to_string(step) + "}\n";
}

// A guard (this process, alive) recorded in a journal with its job's step records: the reader
// gives its levels and counts rank 0's steps as the file grows, then forgets the finished run.
TEST(ExportGuardedJobs, LevelsAndStepsOfARunningGuard) {
  testing::TempDir dir("export-guarded-jobs");
  const auto journal_path = dir / "journal.db";
  const auto records = dir / "steps.jsonl";
  const SysRoot real(std::filesystem::path("/"));
  auto journal = Journal::Open(journal_path);
  ASSERT_TRUE(journal) << EnglishText(journal.error().what);
  auto id =
      journal->BeginRun(RunKind::kGuard, {"python", "train.py"}, std::chrono::system_clock::now());
  ASSERT_TRUE(id);
  const auto self = ReadProcStat(real, ::getpid());
  ASSERT_TRUE(self);
  ASSERT_TRUE(journal->AddEvent(*id, "start", 0, std::chrono::system_clock::now(),
                                GuardStartJson({::getpid(), self->starttime_ticks, "spark-1",
                                                1ULL << 30, 2ULL << 30, records.string()})));
  GuardedJobReader reader(journal_path, real, "spark-1");
  auto jobs = reader.Read();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].run_id, *id);
  EXPECT_EQ(jobs[0].kind, "guard");
  EXPECT_EQ(jobs[0].kill_below_bytes, 1ULL << 30);
  EXPECT_EQ(jobs[0].warn_below_bytes, 2ULL << 30);
  EXPECT_EQ(jobs[0].steps, 0u) << "records named, none written yet";
  EXPECT_FALSE(jobs[0].last_step_wall_s);

  std::ofstream(records, std::ios::app) << StepLine(0, 1, 100) << StepLine(1, 1, 101);
  jobs = reader.Read();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].steps, 1u);
  EXPECT_EQ(jobs[0].last_step_wall_s, 100.0);
  std::ofstream(records, std::ios::app) << StepLine(0, 2, 110) << StepLine(0, 3, 120);
  jobs = reader.Read();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].steps, 3u) << "counted across reads, each line once";
  EXPECT_EQ(jobs[0].last_step_wall_s, 120.0);

  ASSERT_TRUE(journal->FinishRun(*id, "exited", 0, "{}", std::chrono::system_clock::now()));
  EXPECT_TRUE(reader.Read().empty());
}

}  // namespace
}  // namespace headroom
