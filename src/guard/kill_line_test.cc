#include "guard/kill_line.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/bytes.h"
#include "base/message.h"
#include "guard/guard.h"

namespace headroom {
namespace {

GuardSummary Killed(std::string_view reason) {
  GuardSummary s;
  s.killed = true;
  s.kill_reason = std::string(reason);
  s.trigger_available_bytes = 21380 * kMiB;
  s.kill_level_bytes = 21400 * kMiB;
  s.mem_total_bytes = 128 * kGiB;
  s.lowest_available_bytes = 20 * kGiB;
  s.peak_pool_use_bytes = 108 * kGiB;  // the machine's, never the job's
  s.peak_tree_rss_bytes = 3 * kGiB;
  return s;
}

TEST(KillLine, StatesTheReadingAndTheLevel) {
  EXPECT_EQ(EnglishText(KillReadingLine(Killed("memavailable"))),
            "MemAvailable 20.88 GiB fell below the kill level 20.90 GiB");
  GuardSummary p = Killed("projected");
  p.trigger_available_bytes = 22 * kGiB;
  p.fall_rate_bytes_per_s = 2.0 * kGiB;
  p.projected_s = 0.5;
  EXPECT_EQ(EnglishText(KillReadingLine(p)),
            "MemAvailable 22.00 GiB, falling 2.00 GiB/s, was 0.5 s from the kill level 20.90 GiB");
  EXPECT_EQ(EnglishText(KillReadingLine(Killed("psi"))),
            "full memory pressure (PSI) held on with MemAvailable 20.88 GiB, above the kill "
            "level 20.90 GiB");
}

TEST(KillLine, TheJobsOwnPeakIsTheLargestOfItsOwnFiguresNeverThePools) {
  GuardSummary s = Killed("memavailable");
  EXPECT_EQ(JobOwnPeak(s)->source, "tree-rss");
  EXPECT_EQ(JobOwnPeak(s)->bytes, 3 * kGiB);
  s.cgroup_peak_bytes = 5 * kGiB;
  EXPECT_EQ(JobOwnPeak(s)->source, "cgroup");
  EXPECT_EQ(EnglishText(*JobPeakLine(s)),
            "the job's own peak: 5.00 GiB (its cgroup's memory.peak)");
  s.records_peak_bytes = 90 * kGiB;  // GPU memory on unified memory: in no RSS, no cgroup
  EXPECT_EQ(JobOwnPeak(s)->source, "step-records");
  EXPECT_EQ(JobOwnPeak(s)->bytes, 90 * kGiB);
  GuardSummary none = Killed("memavailable");
  none.peak_tree_rss_bytes = 0;
  EXPECT_FALSE(JobOwnPeak(none));
  EXPECT_FALSE(JobPeakLine(none));
}

TEST(KillLine, TheNextStepIsTheLadderForThisJob) {
  EXPECT_EQ(NextStepCommand({"python3", "train.py", "--batch", "8"}),
            "headroom ladder start train --symptom step --match train.py");
  EXPECT_EQ(NextStepCommand({"torchrun", "--nproc-per-node", "2", "/runs/fine tune.py"}),
            "headroom ladder start fine-tune --symptom step --match 'fine tune.py'");
  EXPECT_EQ(NextStepCommand({"python", "-m", "axolotl.cli.train", "cfg.yml"}),
            "headroom ladder start train --symptom step --match axolotl.cli.train");
  EXPECT_EQ(NextStepCommand({"sh", "-c", "exec \"$0\"", "/opt/bin/balloon", "--cap", "1G"}),
            "headroom ladder start balloon --symptom step --match balloon");
  EXPECT_EQ(NextStepCommand({"/usr/bin/llamafactory-cli", "train"}),
            "headroom ladder start llamafactory-cli --symptom step --match llamafactory-cli");
  EXPECT_EQ(NextStepCommand({}), "headroom ladder start job --symptom step");
}

TEST(KillLine, TheJsonHoldsTheSameFacts) {
  EXPECT_TRUE(KillJson(GuardSummary{}).is_null());
  GuardSummary s = Killed("memavailable");
  s.next_step = NextStepCommand({"python3", "train.py"});
  const auto j = KillJson(s);
  EXPECT_EQ(j["reason"], "memavailable");
  EXPECT_EQ(j["available_bytes"], 21380 * kMiB);
  EXPECT_EQ(j["level_bytes"], 21400 * kMiB);
  EXPECT_TRUE(j["projected_s"].is_null());
  EXPECT_EQ(j["job_peak_bytes"], 3 * kGiB);
  EXPECT_EQ(j["job_peak_source"], "tree-rss");
  EXPECT_EQ(j["next_step"], "headroom ladder start train --symptom step --match train.py");
}

}  // namespace
}  // namespace headroom
