// The guardian's choice on a /proc that changes under it (issue 32): a fixture tree with the
// wreckage a busy machine leaves between listing /proc and reading it (a PID directory that
// is gone, files missing, truncated, garbage or not files at all, fd links to memfds that are
// gone), and the real /proc while a child spawns and reaps short-lived processes. The choice
// skips or counts as nothing what it cannot read; it never crashes or picks the wreckage.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "guardian/guardian_loop.h"
#include "guardian/process_memory.h"
#include "testing_children.h"
#include "testing_files.h"

namespace headroom {
namespace {

using namespace std::string_literals;
using testing::TempDir;
using testing::WriteFile;

constexpr uint64_t kChurnGiB = 1ULL << 30;

std::string StatLine(pid_t pid, const std::string& comm, pid_t ppid) {
  return std::to_string(pid) + " (" + comm + ") S " + std::to_string(ppid) + " " +
         std::to_string(pid) + " " + std::to_string(pid) +
         " 0 -1 4194560 1 0 0 0 1 1 0 0 20 0 1 0 777 1 1\n";
}

// proc/PID with a stat, a command line and a cgroup in a login session (a tree job each).
std::filesystem::path FixtureProcess(const TempDir& dir, pid_t pid, const std::string& comm,
                                     pid_t ppid = 1) {
  const auto at = dir.path() / "proc" / std::to_string(pid);
  WriteFile(at / "stat", StatLine(pid, comm, ppid));
  WriteFile(at / "cmdline", comm + "\0"s);
  WriteFile(at / "cgroup", "0::/user.slice/user-1000.slice/session-3.scope\n");
  return at;
}

GuardianIo FixtureIo(std::map<pid_t, uint64_t> gpu) {
  GuardianIo io;
  io.now_s = [] { return 1.0; };
  io.read_available = [] { return std::optional<uint64_t>(4 * kChurnGiB); };
  io.read_gpu = [gpu] { return gpu; };
  return io;
}

TEST(ChoiceOnAChangingProc, WreckageIsSkippedOrCountedAsNothing) {
  TempDir dir("guardian-wreck");
  FixtureProcess(dir, 1, "systemd", 0);
  // The one that holds memory: 1 GiB of RSS.
  auto holder = FixtureProcess(dir, 200, "python3");
  WriteFile(holder / "status", "Name:\tpython3\nVmRSS:\t 1048576 kB\nVmSwap:\t 0 kB\n");
  // Listed, then gone: the directory is there, nothing in it.
  std::filesystem::create_directories(dir.path() / "proc/300");
  // Gone between its stat and its terms: no status, smaps_rollup or fd.
  FixtureProcess(dir, 301, "gone-after-stat");
  // Garbage: numbers too large for any machine, negative, binary.
  auto garbage = FixtureProcess(dir, 302, "garbage");
  WriteFile(garbage / "status",
            "Name:\tgarbage\nVmRSS:\t 18014398509481983 kB\nVmSwap:\t 18014398509481983 kB\n"
            "RssShmem:\t-5 kB\n");
  WriteFile(garbage / "smaps_rollup", "Pss_Shmem: 18014398509481983 kB\n\x01\xff\x00 kB"s);
  // Truncated mid-line, and one past the parser's number range.
  auto truncated = FixtureProcess(dir, 303, "truncated");
  WriteFile(truncated / "status",
            "Name:\ttruncated\nVmSwap:\t 99999999999999999999999 kB\nVmRSS:\t  40");
  WriteFile(truncated / "smaps_rollup", "Rss: 4 kB\nPss_Sh");
  // Not files: status a directory, smaps_rollup a FIFO (reading it must not wait), fd a file.
  auto unreadable = FixtureProcess(dir, 304, "unreadable");
  std::filesystem::create_directories(unreadable / "status");
  ASSERT_EQ(::mkfifo((unreadable / "smaps_rollup").c_str(), 0600), 0);
  WriteFile(unreadable / "fd", "not a directory");
  // fd links: a memfd that is gone, a link to itself, a FIFO named like a memfd.
  auto links = FixtureProcess(dir, 305, "links");
  WriteFile(links / "status", "Name:\tlinks\nVmRSS:\t 1024 kB\n");
  std::filesystem::create_directories(links / "fd");
  std::filesystem::create_symlink("../store/memfd:gone (deleted)", links / "fd/3");
  std::filesystem::create_symlink("4", links / "fd/4");
  std::filesystem::create_directories(links / "store");
  ASSERT_EQ(::mkfifo((links / "store/memfd:fifo (deleted)").c_str(), 0600), 0);
  std::filesystem::create_symlink("../store/memfd:fifo (deleted)", links / "fd/5");
  // A stat that is not one, and a parent loop.
  WriteFile(dir.path() / "proc/306/stat", "306 (x) S notanumber\n");
  FixtureProcess(dir, 400, "loop-a", 401);
  FixtureProcess(dir, 401, "loop-b", 400);

  GuardianOptions o;
  o.min_available_bytes = 2 * kChurnGiB;
  GuardianLoop loop(SysRoot(dir.path()), o, FixtureIo({{301, 0}}));
  const VictimChoice c = loop.ChooseNow();
  ASSERT_TRUE(c.victim) << EnglishText(c.line);
  EXPECT_EQ(c.victim->root, 200);
  EXPECT_EQ(c.victim->HeldBytes(), kChurnGiB);
  for (const Job& j : c.considered) {
    EXPECT_NE(j.root, 300);
    EXPECT_NE(j.root, 306);
    if (j.root != 200) {
      EXPECT_LT(j.HeldBytes(), 16ULL << 20) << j.name << " " << j.HeldBytes();
    }
  }
  // The links process kept its RSS and found no memfd.
  auto p = ReadProcessMemoryBasics(SysRoot(dir.path()), 305);
  ASSERT_TRUE(p);
  ReadProcessTerms(SysRoot(dir.path()), {}, *p);
  EXPECT_EQ(p->rss_bytes, 1024ULL << 10);
  EXPECT_TRUE(p->memfds.empty());
}

// The real /proc while a child spawns and reaps short-lived processes for 3 s: every choice,
// scoped to the test's own tree, is the balloon, whatever came and went while it read.
TEST(ChoiceOnAChangingProc, ChurnUnderTheRealProcLeavesTheChoiceRight) {
  testing::StartedChild balloon({HEADROOM_BALLOON, "--cap", "64M", "--timeout", "30s"});
  testing::StartedChild churn(
      {"/bin/sh", "-c",
       "end=$(($(date +%s) + 3)); while [ $(date +%s) -lt $end ]; do "
       "for i in 1 2 3 4 5 6; do /bin/true & /bin/sleep 0.01 & done; wait; done"});
  for (int i = 0; i < 500; ++i) {  // the balloon holds its cap (bounded: 5 s)
    auto status = SysRoot("/").ReadFile("proc/" + std::to_string(balloon.pid()) + "/status");
    const auto at = status ? status->find("VmRSS:") : std::string::npos;
    if (at != std::string::npos && status->find("Name:\tballoon") != std::string::npos &&
        std::stoull(status->substr(at + 6)) >= 60 * 1024)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  GuardianOptions o;
  o.min_available_bytes = 2 * kChurnGiB;
  o.dry_run = true;
  o.choice.self = ::getpid();
  o.choice.only = {*ParseScope(std::to_string(balloon.pid())),
                   *ParseScope(std::to_string(churn.pid()))};
  GuardianLoop loop(SysRoot("/"), o, FixtureIo({}));
  int choices = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2500);
  while (std::chrono::steady_clock::now() < until) {
    const VictimChoice c = loop.ChooseNow();
    ++choices;
    ASSERT_TRUE(c.victim) << EnglishText(c.line);
    EXPECT_EQ(c.victim->root, balloon.pid()) << EnglishText(c.line);
  }
  EXPECT_GT(choices, 10);
  EXPECT_NE(churn.Reap(5000), -1);  // the churn ended on its own
}

}  // namespace
}  // namespace headroom
