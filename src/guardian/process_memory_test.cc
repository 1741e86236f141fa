#include "guardian/process_memory.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "testing_files.h"

namespace headroom {
namespace {

using namespace std::string_literals;
using testing::TempDir;
using testing::WriteFile;

TEST(ParseStatusMemory, ReadsTheTermsByKey) {
  // Lines of a real /proc/PID/status (kernel 6.8), reordered: the parser goes by key.
  const std::string text =
      "Name:\tpython3\nVmSwap:\t    2048 kB\nUmask:\t0022\nVmRSS:\t  524288 kB\n"
      "RssAnon:\t  262144 kB\nRssShmem:\t  131072 kB\n";
  const StatusMemory m = ParseStatusMemory(text);
  EXPECT_EQ(m.rss_bytes, 524288ULL << 10);
  EXPECT_EQ(m.rss_shmem_bytes, 131072ULL << 10);
  EXPECT_EQ(m.swap_bytes, 2048ULL << 10);
}

TEST(ParseStatusMemory, KernelThreadHasNoMemoryLines) {
  const StatusMemory m = ParseStatusMemory("Name:\tkworker/0:1\nState:\tI (idle)\n");
  EXPECT_FALSE(m.rss_bytes);
  EXPECT_FALSE(m.swap_bytes);
  EXPECT_FALSE(ParseStatusMemory("VmRSS:\t kB\n").rss_bytes);
}

TEST(ParseSmapsRollupShmemBytes, PssShmemLine) {
  const std::string text =
      "55d0c0a00000-7ffd1e7f6000 ---p 00000000 00:00 0                          [rollup]\n"
      "Rss:              884736 kB\nPss:              870000 kB\nPss_Anon:          10000 kB\n"
      "Pss_File:           1000 kB\nPss_Shmem:        859000 kB\n";
  EXPECT_EQ(ParseSmapsRollupShmemBytes(text), 859000ULL << 10);
  EXPECT_FALSE(ParseSmapsRollupShmemBytes("Rss: 1 kB\nPss: 1 kB\n"));
}

TEST(IsMemfdTarget, MatchesTheLastComponent) {
  EXPECT_TRUE(IsMemfdTarget("/memfd:cuda-balloon (deleted)"));
  EXPECT_TRUE(IsMemfdTarget("../store/memfd:x (deleted)"));
  EXPECT_FALSE(IsMemfdTarget("/dev/shm/memfd:x/../data"));
  EXPECT_FALSE(IsMemfdTarget("socket:[12345]"));
  EXPECT_FALSE(IsMemfdTarget("/home/u/memfd.txt"));
}

TEST(ReadProcessTerms, FixtureTreeWithAMemfd) {
  TempDir dir("guardian-pm");
  const auto proc = dir.path() / "proc/4242";
  WriteFile(proc / "stat",
            "4242 (python3) S 4000 4242 4242 0 -1 4194560 1 0 0 0 1 1 0 0 20 0 3 0 777 1 1\n");
  WriteFile(proc / "cmdline", "python3\0serve.py\0"s);
  WriteFile(proc / "cgroup", "0::/user.slice/user-1000.slice/session-3.scope\n");
  WriteFile(proc / "status",
            "Name:\tpython3\nUid:\t1000\t1000\t1000\t1000\nVmRSS:\t  4096 kB\n"
            "RssShmem:\t 0 kB\nVmSwap:\t 8 kB\n");
  WriteFile(proc / "smaps_rollup", "Rss: 4096 kB\nPss_Shmem:  0 kB\n");
  // The memfd: a file named as the kernel names one, and two descriptors on it.
  WriteFile(proc / "store/memfd:cuda (deleted)", std::string(8192, 'x'));
  std::filesystem::create_directories(proc / "fd");
  std::filesystem::create_symlink("../store/memfd:cuda (deleted)", proc / "fd/3");
  std::filesystem::create_symlink("../store/memfd:cuda (deleted)", proc / "fd/4");
  WriteFile(proc / "store/plain", "y");
  std::filesystem::create_symlink("../store/plain", proc / "fd/5");

  const SysRoot root(dir.path());
  auto p = ReadProcessMemoryBasics(root, 4242);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->comm, "python3");
  EXPECT_EQ(p->ppid, 4000);
  EXPECT_EQ(p->argv.size(), 2u);
  EXPECT_EQ(p->cgroup, "/user.slice/user-1000.slice/session-3.scope");
  EXPECT_FALSE(p->kernel_thread);
  ReadProcessTerms(root, {{4242, 1ULL << 30}}, *p);
  EXPECT_EQ(p->rss_bytes, 4096ULL << 10);
  EXPECT_EQ(p->swap_bytes, 8ULL << 10);
  EXPECT_EQ(p->gpu_bytes, 1ULL << 30);
  ASSERT_EQ(p->memfds.size(), 2u);  // two descriptors, one inode
  EXPECT_EQ(p->memfds[0].bytes, 8192u);
  EXPECT_EQ(p->memfds[0].inode, p->memfds[1].inode);
  EXPECT_FALSE(ReadProcessMemoryBasics(root, 4243));
}

// In a PID namespace (a container, the end-to-end test's `unshare --pid`) PID 2 is an
// ordinary process: a kernel thread is what the kernel marks so (PF_KTHREAD in stat's flags).
TEST(ReadProcessMemoryBasics, AKernelThreadIsTheKernelsMarkNotPidTwo) {
  TempDir dir("guardian-kthread");
  WriteFile(dir / "proc/2/stat",
            "2 (balloon) S 1 2 1 0 -1 4194560 1 0 0 0 1 1 0 0 20 0 1 0 900 1 1\n");
  WriteFile(dir / "proc/2/cmdline", "balloon\0--cap\0512M\0"s);
  WriteFile(dir / "proc/7/stat",
            "7 (kworker/0:1) I 2 0 0 0 -1 69238880 0 0 0 0 0 0 0 0 20 0 1 0 3 0 0\n");
  WriteFile(dir / "proc/7/cmdline", "");
  const SysRoot root(dir.path());
  const auto ordinary = ReadProcessMemoryBasics(root, 2);
  ASSERT_TRUE(ordinary);
  EXPECT_FALSE(ordinary->kernel_thread);
  const auto kworker = ReadProcessMemoryBasics(root, 7);
  ASSERT_TRUE(kworker);
  EXPECT_TRUE(kworker->kernel_thread);
}

TEST(ReadMemfds, SeesThisProcesssOwnUnmappedMemfd) {
  const int fd = ::memfd_create("guardian-test", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 3 << 20), 0);  // sparse: no memory is taken
  const auto held = ReadMemfds(SysRoot("/"), ::getpid());
  ::close(fd);
  bool found = false;
  for (const auto& m : held) found = found || m.bytes == (3u << 20);
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace headroom
