// JobCgroup against the machine's real cgroup hierarchy: a leftover directory is never
// adopted. Skipped where this process cannot make a cgroup (no write access, no delegation).
#include "guard/job_cgroup.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "base/message.h"

namespace headroom {
namespace {

std::string TestName(const char* what) {
  return std::string("headroom-test-") + what + "-" + std::to_string(::getpid());
}

// A child that joins `procs` and sleeps; waits until the cgroup lists it.
pid_t StartMember(const JobCgroup& cg) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::ofstream(cg.procs_path()) << 0 << std::flush;
    ::execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  for (int i = 0; i < 200 && cg.Empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pid;
}

TEST(JobCgroup, ALeftoverThatHoldsProcessesIsNeverAdopted) {
  auto first = JobCgroup::Create(SysRoot("/"), TestName("busy"));
  if (!first) GTEST_SKIP() << "no cgroup here: " << EnglishText(first.error().what);
  const pid_t orphan = StartMember(*first);
  ASSERT_FALSE(first->Empty());
  // Another guard with the same name (the same PID, later): a directory of its own.
  auto second = JobCgroup::Create(SysRoot("/"), TestName("busy"));
  ASSERT_TRUE(second) << EnglishText(second.error().what);
  EXPECT_EQ(second->dir(), first->dir() + "-1");
  EXPECT_TRUE(second->Empty());
  // Its kill cannot reach the orphan.
  EXPECT_TRUE(second->KillAll(SysRoot("/")) || !second->is_v2());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(::waitpid(orphan, nullptr, WNOHANG), 0) << "the leftover's process was killed";
  ::kill(orphan, SIGKILL);
  ::waitpid(orphan, nullptr, 0);
}

TEST(JobCgroup, AnEmptyLeftoverIsRemovedAndMadeAfresh) {
  std::string dir;
  {
    auto probe = JobCgroup::Create(SysRoot("/"), TestName("empty"));
    if (!probe) GTEST_SKIP() << "no cgroup here: " << EnglishText(probe.error().what);
    dir = probe->dir();
  }
  // A leftover of that name, as a guard killed with SIGKILL leaves it.
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  struct stat before {};
  ASSERT_EQ(::stat(dir.c_str(), &before), 0);
  auto cg = JobCgroup::Create(SysRoot("/"), TestName("empty"));
  ASSERT_TRUE(cg) << EnglishText(cg.error().what);
  EXPECT_EQ(cg->dir(), dir);
  struct stat after {};
  ASSERT_EQ(::stat(dir.c_str(), &after), 0);
  EXPECT_NE(before.st_ino, after.st_ino) << "the leftover directory was adopted, not made afresh";
}

}  // namespace
}  // namespace headroom
