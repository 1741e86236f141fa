#include "sys/processes.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <set>

namespace headroom {
namespace {

TEST(ProcStat, ParsesRealFormat) {
  const auto s = ParseProcStat(
      "1234 (python3) S 1200 1234 1234 34816 1234 4194304 1000 0 0 0 50 10 0 0 20 0 4 0 "
      "987654 123456789 5000 18446744073709551615 1 1 0 0 0 0 0 16781312 134234626 0 0 0 17 "
      "1 0 0 0 0 0\n");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->pid, 1234);
  EXPECT_EQ(s->comm, "python3");
  EXPECT_EQ(s->state, 'S');
  EXPECT_EQ(s->ppid, 1200);
  EXPECT_EQ(s->pgrp, 1234);
  EXPECT_EQ(s->session, 1234);
  EXPECT_EQ(s->starttime_ticks, 987654u);
  EXPECT_EQ(s->rss_pages, 5000u);
}

TEST(ProcStat, HostileCommWithParenthesesSpacesAndNewline) {
  const auto s =
      ParseProcStat("77 (a) b) S 1 (x\ny) Z 5 6 7 8 9 10 0 0 0 0 0 0 0 0 20 0 1 0 42 100 7 0 0\n");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->comm, "a) b) S 1 (x\ny");
  EXPECT_EQ(s->state, 'Z');
  EXPECT_EQ(s->ppid, 5);
  EXPECT_EQ(s->starttime_ticks, 42u);
}

TEST(ProcStat, RejectsGarbage) {
  for (const char* bad : {"", "x", "12 (a", "12 (a) S", "abc (a) S 1 2 3", "12 (a) SS 1 2 3"}) {
    EXPECT_FALSE(ParseProcStat(bad)) << bad;
  }
}

TEST(ProcStat, ReadsThisProcessAndFindsChildren) {
  const SysRoot root("/");
  const auto self = ReadProcStat(root, getpid());
  ASSERT_TRUE(self);
  EXPECT_EQ(self->pid, getpid());
  EXPECT_EQ(self->ppid, getppid());
  const pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  bool found = false;
  for (const auto& d : Descendants(root, getpid())) found |= d.pid == child;
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_TRUE(found);
  EXPECT_FALSE(ReadProcStat(root, child));
}

TEST(ProcStat, ChildLinksFindTheSameTreeAsAFullScan) {
  const SysRoot root("/");
  const pid_t child = fork();
  if (child == 0) {
    const pid_t grandchild = fork();
    if (grandchild == 0) {
      pause();
      _exit(0);
    }
    pause();
    _exit(0);
  }
  usleep(100000);
  auto linked = DescendantsByChildLinks(root, getpid());
  const auto scanned = Descendants(root, getpid());
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_TRUE(linked) << "no children files";
  std::set<pid_t> a, b;
  for (const auto& p : *linked) a.insert(p.pid);
  for (const auto& p : scanned) b.insert(p.pid);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.size(), 2u);  // the child and the grandchild (killed with it below)
  for (pid_t p : a) {
    if (p != child) kill(p, SIGKILL);
  }
}

TEST(ProcStatus, VmRss) {
  EXPECT_EQ(ParseStatusRssBytes("Name:\tx\nVmRSS:\t  2048 kB\nThreads: 1\n"), 2048u * 1024);
  EXPECT_FALSE(ParseStatusRssBytes("Name:\tkthreadd\n"));
  EXPECT_FALSE(ParseStatusRssBytes("Name:\tx\nVmRSS:\t99999999999999999999 kB\n"));
}

}  // namespace
}  // namespace headroom
