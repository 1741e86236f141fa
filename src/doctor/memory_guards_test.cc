#include "doctor/memory_guards.h"

#include <gtest/gtest.h>

#include "testing_files.h"

namespace headroom {
namespace {

TEST(MemoryGuardOf, NamesTheGuards) {
  EXPECT_EQ(MemoryGuardOf("earlyoom", {"/usr/bin/earlyoom", "-r", "3600"}), "earlyoom");
  EXPECT_EQ(MemoryGuardOf("systemd-oomd", {"/usr/lib/systemd/systemd-oomd"}), "systemd-oomd");
  EXPECT_EQ(MemoryGuardOf("python3", {"/usr/bin/python3", "/usr/sbin/nohang", "--monitor"}),
            "nohang");
  EXPECT_EQ(MemoryGuardOf("headroom", {"/usr/bin/headroom", "guardian"}), "headroom guardian");
  // The lean worker `headroom guardian` execs: its comm is cut to 15 bytes.
  EXPECT_EQ(MemoryGuardOf("headroom-guardi",
                          {"headroom-guardian", "min-available=4294967296", "grace-ms=3000"}),
            "headroom guardian");
  EXPECT_FALSE(MemoryGuardOf("headroom", {"/usr/bin/headroom", "guard", "--", "python3"}));
  EXPECT_FALSE(MemoryGuardOf("vim", {"vim", "earlyoom.conf"}));
}

TEST(FindMemoryGuards, ScansTheTreeOncePerGuard) {
  testing::TempDir dir("memory-guards");
  auto add = [&](int pid, const std::string& comm, const std::string& cmdline) {
    const auto p = dir.path() / "proc" / std::to_string(pid);
    testing::WriteFile(p / "stat", std::to_string(pid) + " (" + comm +
                                       ") S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0\n");
    testing::WriteFile(p / "cmdline", cmdline);
  };
  using namespace std::string_literals;
  add(10, "headroom", "/usr/bin/headroom\0guardian\0"s);
  add(11, "earlyoom", "/usr/bin/earlyoom\0"s);
  add(12, "earlyoom", "/usr/bin/earlyoom\0"s);
  add(13, "bash", "bash\0"s);
  EXPECT_EQ(FindMemoryGuards(SysRoot(dir.path())),
            (std::vector<std::string>{"earlyoom", "headroom guardian"}));
  EXPECT_TRUE(FindMemoryGuards(SysRoot(dir.path() / "none")).empty());
}

}  // namespace
}  // namespace headroom
