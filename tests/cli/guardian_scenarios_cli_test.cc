// `headroom guardian` in the scenarios of issue 32's "Tested for real" that need more than the
// guardian and a balloon: a job in a cgroup of its own. Like guardian_cli_test.cc, every test
// scopes the guardian to what it started (--only), caps every balloon at a few hundred MiB,
// sets its levels from the current MemAvailable, bounds every wait and reaps by pid.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "guard/job_cgroup.h"
#include "sys/process_survey.h"
#include "testing_children.h"
#include "testing_files.h"
#include "testing_guardian.h"
#include "testing_processes.h"

namespace headroom {
namespace {

using testing::Alive;
using testing::TempDir;

// The pids a balloon wrote to its --pidfile, less its own, once there are `n` (bounded: 5 s).
std::vector<pid_t> WorkerPids(const std::string& pidfile, pid_t parent, size_t n) {
  std::vector<pid_t> pids;
  for (int i = 0; i < 500 && pids.size() < n; ++i) {
    pids.clear();
    std::ifstream in(pidfile);
    for (pid_t p; in >> p;)
      if (p != parent) pids.push_back(p);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pids;
}

// Workers that double-forked and called setsid: their parent is init (or a subreaper), their
// session their own; the cgroup the job was started in is all that still ties them to it.
TEST(GuardianScenarios, ADoubleForkedWorkerInTheJobsCgroupIsEndedWithTheJob) {
  TempDir dir("guardian-cgroup");
  auto cgroup =
      JobCgroup::Create(SysRoot("/"), "headroom-guardian-test-" + std::to_string(getpid()));
  ASSERT_TRUE(cgroup) << "no cgroup could be made: " << EnglishText(cgroup.error().what);
  if (!cgroup->is_v2()) GTEST_SKIP() << "no cgroup v2 here: the guardian reads v2 paths only";
  testing::StartedChild job(testing::Balloon({"--cap", "192M", "--children", "2", "--double-fork",
                                              "--setsid", "--pidfile", dir.File("pids")}),
                            {}, "", cgroup->procs_path());
  const std::vector<pid_t> workers = WorkerPids(dir.File("pids"), job.pid(), 2);
  ASSERT_EQ(workers.size(), 2u);
  for (const pid_t p : workers) {
    testing::WaitHeld(p, 90 << 10);
    const auto stat = ReadProcStat(SysRoot("/"), p);
    ASSERT_TRUE(stat);
    EXPECT_NE(stat->ppid, job.pid()) << p << " is still its parent's child";
    EXPECT_NE(stat->session, ReadProcStat(SysRoot("/"), job.pid())->session);
  }
  const auto text = SysRoot("/").ReadFile("proc/" + std::to_string(job.pid()) + "/cgroup");
  ASSERT_TRUE(text);
  const std::string path = ParseCgroupV2Path(*text).value_or("");
  ASSERT_NE(path, "/");
  auto args = testing::CrossedLevels();
  args.insert(args.end(), {"--only", path, "--grace", "2s"});
  testing::StartedChild guardian(testing::GuardianArgs(dir, args),
                                 {"HEADROOM_FAKE_NVML_SCRIPT=/nonexistent"});
  const auto events = testing::WaitEvent(dir.File("events.jsonl"), "ended");
  EXPECT_EQ(guardian.Stop(), 0);
  const auto kill = testing::First(events, "kill");
  ASSERT_FALSE(kill.is_null()) << dir.File("events.jsonl");
  EXPECT_EQ(kill["victim"]["pid"], job.pid());
  EXPECT_EQ(kill["victim"]["cgroup"], path);
  EXPECT_EQ(kill["victim"]["pids"].size(), 3u) << kill["victim"]["pids"];
  EXPECT_NE(job.Reap(5000), -1);
  for (const pid_t p : workers) {
    for (int i = 0; i < 500 && Alive(p); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(Alive(p)) << p;  // init reaps them
  }
  cgroup->KillAll(SysRoot("/"));  // whatever a failure left: the cgroup is removed empty
  for (int i = 0; i < 500 && !cgroup->Empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

}  // namespace
}  // namespace headroom
