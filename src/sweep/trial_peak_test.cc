#include "sweep/trial_peak.h"

#include <gtest/gtest.h>

#include "base/bytes.h"

namespace headroom {
namespace {

// Issue 31: another process freed memory during the trial, so the pool's fall under-reads
// the job; the job's own reading is what the trial is judged by.
TEST(JudgePeak, TheJobsOwnPeakWinsOverAPoolFallThatUnderReads) {
  PeakReadings r;
  r.tree_rss_bytes = 1075 * kMiB;
  r.pool_fall_bytes = 475 * kMiB;
  const JudgedPeak p = JudgePeak(r);
  EXPECT_EQ(p.bytes, 1075 * kMiB);
  EXPECT_EQ(p.measure, "tree-rss");
  EXPECT_EQ(p.own_measure, "tree-rss");
}

TEST(JudgePeak, TheCgroupComesFirstAndThePoolCanOnlyRaiseIt) {
  PeakReadings r;
  r.cgroup_bytes = 2 * kGiB;
  r.tree_rss_bytes = 3 * kGiB;  // not used when the cgroup read
  r.step_records_bytes = 3 * kGiB;
  r.pool_fall_bytes = kGiB;
  EXPECT_EQ(JudgePeak(r).bytes, 2 * kGiB);
  EXPECT_EQ(JudgePeak(r).measure, "cgroup");
  r.pool_fall_bytes = 5 * kGiB;  // something else took memory too: the higher reading stands
  const JudgedPeak raised = JudgePeak(r);
  EXPECT_EQ(raised.bytes, 5 * kGiB);
  EXPECT_EQ(raised.measure, "memavailable");
  EXPECT_EQ(raised.own_measure, "cgroup");
  EXPECT_EQ(raised.own_bytes, 2 * kGiB);
}

TEST(JudgePeak, StepRecordsSeeWhatRssMissesOnUnifiedMemory) {
  PeakReadings r;
  r.tree_rss_bytes = kGiB;           // host memory only
  r.step_records_bytes = 40 * kGiB;  // + the torch allocator's device peak
  r.pool_fall_bytes = 30 * kGiB;
  EXPECT_EQ(JudgePeak(r).bytes, 40 * kGiB);
  EXPECT_EQ(JudgePeak(r).measure, "step-records");
  // Another process took 20 GiB during the trial: the records still say what the job held.
  r.pool_fall_bytes = 60 * kGiB;
  EXPECT_EQ(JudgePeak(r).bytes, 40 * kGiB);
  // A tree holding more than its records count (a worker that writes none): its RSS.
  r.step_records_bytes = kGiB / 2;
  r.pool_fall_bytes = kGiB / 4;
  EXPECT_EQ(JudgePeak(r).bytes, kGiB);
  EXPECT_EQ(JudgePeak(r).measure, "tree-rss");
}

TEST(JudgePeak, WithNoReadingOfItsOwnThePoolFallIsAllThereIs) {
  PeakReadings r;
  r.tree_rss_bytes = 0;
  r.pool_fall_bytes = 7 * kMiB;
  const JudgedPeak p = JudgePeak(r);
  EXPECT_EQ(p.bytes, 7 * kMiB);
  EXPECT_EQ(p.measure, "memavailable");
  EXPECT_FALSE(p.own_bytes);
}

}  // namespace
}  // namespace headroom
