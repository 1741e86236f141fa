#include "guardian/victim_choice.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace headroom {
namespace {

constexpr uint64_t kMiBytes = 1ULL << 20;
constexpr uint64_t kGiBytes = 1ULL << 30;

ProcessMemory Proc(pid_t pid, pid_t ppid, std::string comm, uint64_t rss = 0) {
  ProcessMemory p;
  p.pid = pid;
  p.ppid = ppid;
  p.session = pid;
  p.state = 'S';
  p.comm = comm;
  p.argv = {comm};
  p.cgroup = "/user.slice/user-1000.slice/session-3.scope";
  p.rss_bytes = rss;
  return p;
}

// A machine: init, sshd, a login shell, and below the shell whatever the test adds.
std::vector<ProcessMemory> Box() {
  std::vector<ProcessMemory> t = {Proc(1, 0, "systemd", 12 * kMiBytes), Proc(2, 0, "kthreadd"),
                                  Proc(900, 1, "sshd", 8 * kMiBytes),
                                  Proc(1000, 900, "bash", 4 * kMiBytes)};
  t[1].kernel_thread = true;
  t[0].cgroup = "/init.scope";
  return t;
}

VictimChoice Choose(const std::vector<ProcessMemory>& t, const ChoiceOptions& o) {
  return ChooseVictim(GroupJobs(t, CandidatePids(t, o), o));
}

TEST(ChooseVictim, TheGpuHolderOverALargerRssBystander) {
  auto t = Box();
  t.push_back(Proc(2000, 1000, "python3", 300 * kMiBytes));  // the holder: small RSS
  t.back().gpu_bytes = 2 * kGiBytes;
  t.back().memfds = {{77, 1 * kGiBytes}};
  t.push_back(Proc(3000, 1000, "bystander", 1536 * kMiBytes));
  const auto c = Choose(t, {});
  ASSERT_TRUE(c.victim);
  EXPECT_EQ(c.victim->root, 2000);
  EXPECT_EQ(c.victim->HeldBytes(), 300 * kMiBytes + 3 * kGiBytes);
  const std::string line = EnglishText(c.line);
  EXPECT_NE(line.find("victim python3 (pid 2000, 1 processes)"), std::string::npos) << line;
  EXPECT_NE(line.find("gpu 2147483648"), std::string::npos) << line;
  EXPECT_NE(line.find("bystander pid 3000 held 1610612736 B"), std::string::npos) << line;
}

TEST(ChooseVictim, NeverTheMachinesOwnProcesses) {
  auto t = Box();
  t[0].rss_bytes = 8 * kGiBytes;  // even the largest
  t[2].rss_bytes = 8 * kGiBytes;
  t.push_back(Proc(1500, 1, "Xorg", 4 * kGiBytes));
  t.push_back(Proc(1600, 1, "agent", 2 * kGiBytes));
  t.back().cgroup = "/system.slice/systemd-journald.service";
  t.push_back(Proc(4000, 1000, "headroom", 6 * kGiBytes));      // a guard
  t.push_back(Proc(4100, 1, "headroom-guardi", 3 * kGiBytes));  // another guardian's worker
  const auto c = Choose(t, {});
  EXPECT_FALSE(c.victim);
  EXPECT_NE(EnglishText(c.line).find("no victim"), std::string::npos);
  // Neither the guardian nor anything above it.
  t.push_back(Proc(5000, 1000, "python3", 4 * kGiBytes));
  t.push_back(Proc(5001, 5000, "guardian-host", 1 * kGiBytes));
  ChoiceOptions o;
  o.self = 5001;
  EXPECT_FALSE(Choose(t, o).victim);
}

TEST(ChooseVictim, ProtectedOnlyWhenNothingElseHoldsMemory) {
  auto t = Box();
  t.push_back(Proc(2000, 1000, "ollama", 6 * kGiBytes));
  t.push_back(Proc(3000, 1000, "notebook", 1 * kGiBytes));
  ChoiceOptions o;
  o.protect = {"ollama"};
  auto c = Choose(t, o);
  ASSERT_TRUE(c.victim);
  EXPECT_EQ(c.victim->root, 3000);
  t.back().rss_bytes = 4 * kMiBytes;  // the notebook holds nothing to speak of
  c = Choose(t, o);
  ASSERT_TRUE(c.victim);
  EXPECT_EQ(c.victim->root, 2000);
  EXPECT_NE(EnglishText(c.line).find("protected, but nothing else"), std::string::npos);
}

TEST(ChooseVictim, PreferredFirst) {
  auto t = Box();
  t.push_back(Proc(2000, 1000, "vllm", 6 * kGiBytes));
  t.push_back(Proc(3000, 1000, "comfyui", 1 * kGiBytes));
  ChoiceOptions o;
  o.prefer = {"*comfy*"};
  const auto c = Choose(t, o);
  ASSERT_TRUE(c.victim);
  EXPECT_EQ(c.victim->root, 3000);
}

TEST(GroupJobs, ATreeWithAWorkerInItsOwnSessionIsOneJob) {
  auto t = Box();
  t.push_back(Proc(2000, 1000, "torchrun", 100 * kMiBytes));
  t.push_back(Proc(2001, 2000, "python3", 1 * kGiBytes));
  t.push_back(Proc(2002, 2000, "python3", 1 * kGiBytes));
  t.back().session = 2002;  // setsid
  t.back().memfds = {{9, 2 * kGiBytes}};
  t[t.size() - 2].memfds = {{9, 2 * kGiBytes}};  // the same memfd, inherited
  t.push_back(Proc(3000, 1000, "bystander", 2 * kGiBytes));
  const auto c = Choose(t, {});
  ASSERT_TRUE(c.victim);
  EXPECT_EQ(c.victim->root, 2000);
  EXPECT_EQ(c.victim->pids, (std::vector<pid_t>{2000, 2001, 2002}));
  EXPECT_EQ(c.victim->memfd_bytes, 2 * kGiBytes);  // once
  // The tree, the bystander, and the shell above them on its own (a job too small to end).
  ASSERT_EQ(c.considered.size(), 3u);
  EXPECT_EQ(c.considered[2].pids, std::vector<pid_t>{1000});
}

TEST(GroupJobs, AServiceCgroupIsOneJob) {
  auto t = Box();
  t.push_back(Proc(2000, 1, "ollama", 1 * kGiBytes));
  t.back().cgroup = "/system.slice/ollama.service";
  t.push_back(Proc(2100, 1, "ollama_llama_se", 3 * kGiBytes));
  t.back().cgroup = "/system.slice/ollama.service";
  const auto c = Choose(t, {});
  ASSERT_TRUE(c.victim);
  EXPECT_EQ(c.victim->cgroup, "/system.slice/ollama.service");
  EXPECT_EQ(c.victim->pids.size(), 2u);
}

TEST(ChooseVictim, AJobUnderALiveGuardIsLeftToIt) {
  auto t = Box();
  t.push_back(Proc(4000, 1000, "headroom", 10 * kMiBytes));
  t.push_back(Proc(4001, 4000, "python3", 8 * kGiBytes));
  t.push_back(Proc(3000, 1000, "bystander", 1 * kGiBytes));
  ChoiceOptions o;
  o.guard_pids = {4000};
  auto c = Choose(t, o);
  ASSERT_TRUE(c.victim);
  EXPECT_EQ(c.victim->root, 3000);
  EXPECT_NE(EnglishText(c.line).find("python3 pid 4001 held 8589934592 B (left to its guard)"),
            std::string::npos)
      << EnglishText(c.line);
  o.guard_pids.clear();  // the guard is gone or silent
  c = Choose(t, o);
  ASSERT_TRUE(c.victim);
  EXPECT_EQ(c.victim->root, 4001);
}

// A job in its own cgroup (`headroom guard`'s, systemd-run's, a batch system's): a worker that
// double-forked and called setsid left its parent's tree and session, not the cgroup.
std::vector<ProcessMemory> JobWithADoubleForkedWorker(const std::string& cgroup) {
  auto t = Box();
  t.push_back(Proc(2000, 1000, "trainer", 100 * kMiBytes));
  t.back().cgroup = cgroup;
  t.back().start_ticks = 500;
  t.push_back(Proc(2001, 2000, "rank", 600 * kMiBytes));
  t.back().cgroup = cgroup;
  t.back().start_ticks = 501;
  t.push_back(Proc(2500, 1, "rank", 900 * kMiBytes));  // reparented to init
  t.back().cgroup = cgroup;
  t.back().start_ticks = 502;
  t.push_back(Proc(3000, 1000, "bystander", 1200 * kMiBytes));
  return t;
}

TEST(GroupJobs, ADoubleForkedWorkerInItsJobsCgroupIsInTheJob) {
  const auto t = JobWithADoubleForkedWorker("/headroom-guard-4000/job");
  const auto c = Choose(t, {});
  ASSERT_TRUE(c.victim);
  EXPECT_EQ(c.victim->root, 2000);  // the first started of the cgroup's roots
  EXPECT_EQ(c.victim->name, "trainer");
  EXPECT_EQ(c.victim->cgroup, "/headroom-guard-4000/job");
  EXPECT_EQ(c.victim->pids, (std::vector<pid_t>{2000, 2001, 2500}));
  EXPECT_EQ(c.victim->HeldBytes(), 1600 * kMiBytes);
}

TEST(GroupJobs, ASharedCgroupGroupsByTreeAndTheEscapedWorkerIsAJobOfItsOwn) {
  // Everything in the login session's scope (docs/guardian.md "Limits"): the worker that
  // left the tree is a job by itself, and the bystander outweighs it.
  auto t = JobWithADoubleForkedWorker("/user.slice/user-1000.slice/session-3.scope");
  auto c = Choose(t, {});
  ASSERT_TRUE(c.victim);
  EXPECT_EQ(c.victim->root, 3000);
  // A terminal's scope holds the user's shell: its processes stay separate jobs, the shell
  // is never ended with them.
  const std::string tab =
      "/user.slice/user-1000.slice/user@1000.service/app.slice/vte-spawn-1.scope";
  t = JobWithADoubleForkedWorker(tab);
  t[3].cgroup = tab;  // the shell
  c = Choose(t, {});
  ASSERT_TRUE(c.victim);
  EXPECT_EQ(c.victim->root, 3000);
  for (const auto& j : c.considered) EXPECT_TRUE(j.cgroup.empty()) << j.cgroup;
}

TEST(CandidatePids, OnlyLimitsToTreesCgroupsAndNames) {
  auto t = Box();
  t.push_back(Proc(2000, 1000, "a", kGiBytes));
  t.push_back(Proc(2001, 2000, "a-worker", kGiBytes));
  t.push_back(Proc(3000, 1000, "b", kGiBytes));
  t.back().cgroup = "/user.slice/jobs/b";
  ChoiceOptions o;
  o.only = {*ParseScope("2000")};
  EXPECT_EQ(CandidatePids(t, o), (std::set<pid_t>{2000, 2001}));
  o.only = {*ParseScope("/user.slice/jobs/")};
  EXPECT_EQ(CandidatePids(t, o), (std::set<pid_t>{3000}));
  o.only = {*ParseScope("a-*")};
  EXPECT_EQ(CandidatePids(t, o), (std::set<pid_t>{2001}));
  EXPECT_FALSE(ParseScope(""));
  EXPECT_FALSE(ParseScope("1"));
  EXPECT_EQ(ParseScope("ollama")->kind, Scope::Kind::kName);
}

}  // namespace
}  // namespace headroom
