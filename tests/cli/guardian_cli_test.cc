// `headroom guardian` against real processes and signals (docs/guardian.md). Every test
// scopes the guardian to the processes it started (--only), caps every balloon at a few
// hundred MiB, sets its levels from the current MemAvailable, bounds every wait and reaps
// every child by pid.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "run_cli.h"
#include "testing_children.h"
#include "testing_files.h"
#include "testing_guardian.h"
#include "testing_memory.h"
#include "testing_processes.h"

namespace headroom {
namespace {

using testing::Alive;
using testing::AvailableNow;
using testing::Contains;
using testing::TempDir;
using testing::TotalNow;

using Started = testing::StartedChild;
using testing::Balloon;
using testing::CrossedLevels;
using testing::First;
using testing::GuardianArgs;
using testing::kGuardianBalloon;
using testing::Mib;
using testing::WaitEvent;
using testing::WaitHeld;

TEST(GuardianCli, TheMemfdHolderNvmlReportsIsChosenOverALargerRssBystander) {
  TempDir dir("guardian-holder");
  // The holder waits a little before it fills, so its pid is in the fake NVML's list before
  // the guardian loads it; exec keeps the pid. It fills four times the distance to the level,
  // so the crossing comes even when other processes give back a GiB meanwhile.
  Started holder({"/bin/sh", "-c",
                  "sleep 3; exec " + kGuardianBalloon +
                      " --timeout 60s --mode memfd --cap 1536M --rate 512M"});
  Started bystander(Balloon({"--cap", "512M"}));
  WaitHeld(bystander.pid(), 500 << 10);
  testing::WriteFile(dir / "nvml",
                     "scenario gb10\nprocess " + std::to_string(holder.pid()) + " 2048\n");
  const uint64_t before = AvailableNow();
  Started guardian(
      GuardianArgs(dir, {"--min-available", Mib(before - (384ULL << 20)), "--warn-available",
                         Mib(before - (128ULL << 20)), "--only", std::to_string(holder.pid()),
                         "--only", std::to_string(bystander.pid())}),
      {"HEADROOM_FAKE_NVML_SCRIPT=" + (dir / "nvml").string()});
  const auto events = WaitEvent(dir.File("events.jsonl"), "ended");
  EXPECT_EQ(guardian.Stop(), 0);
  const auto kill = First(events, "kill");
  ASSERT_FALSE(kill.is_null()) << dir.File("events.jsonl");
  EXPECT_EQ(kill["victim"]["pid"], holder.pid());
  EXPECT_EQ(kill["victim"]["gpu_bytes"], 2048ULL << 20);
  EXPECT_TRUE(Contains(kill["message"], "gpu 2147483648")) << kill["message"];
  EXPECT_TRUE(Contains(kill["message"], "balloon pid " + std::to_string(bystander.pid())))
      << kill["message"];
  EXPECT_NE(holder.Reap(5000), -1);
  EXPECT_TRUE(Alive(bystander.pid()));
}

TEST(GuardianCli, DryRunSignalsNothingAndAProtectedProcessIsPassedOver) {
  TempDir dir("guardian-dry");
  Started big(Balloon({"--cap", "384M"}));
  Started small(Balloon({"--cap", "128M"}));
  WaitHeld(big.pid(), 380 << 10);
  WaitHeld(small.pid(), 120 << 10);
  auto args = CrossedLevels();
  for (const std::string a : {"--dry-run", "--protect", "*balloon*--cap 384M*", "--only"})
    args.push_back(a);
  args.push_back(std::to_string(big.pid()));
  args.push_back("--only");
  args.push_back(std::to_string(small.pid()));
  Started guardian(GuardianArgs(dir, args), {"HEADROOM_FAKE_NVML_SCRIPT=/nonexistent"});
  const auto events = WaitEvent(dir.File("events.jsonl"), "choice");
  EXPECT_EQ(guardian.Stop(), 0);
  const auto choice = First(events, "choice");
  ASSERT_FALSE(choice.is_null());
  EXPECT_EQ(choice["victim"]["pid"], small.pid());
  EXPECT_TRUE(Contains(choice["message"], "(protected)")) << choice["message"];
  EXPECT_TRUE(First(events, "kill").is_null());
  EXPECT_TRUE(Alive(big.pid()));
  EXPECT_TRUE(Alive(small.pid()));
}

TEST(GuardianCli, ATreeWithWorkersInTheirOwnSessionsIsEndedWhole) {
  TempDir dir("guardian-tree");
  Started tree(Balloon({"--cap", "192M", "--children", "2", "--setsid", "--no-pdeathsig",
                        "--pidfile", dir.File("pids")}));
  std::vector<pid_t> pids;
  for (int i = 0; i < 500 && pids.size() < 2; ++i) {
    pids.clear();
    std::ifstream in(dir.File("pids"));
    for (pid_t p; in >> p;)
      if (p != tree.pid()) pids.push_back(p);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(pids.size(), 2u);
  for (const pid_t p : pids) WaitHeld(p, 90 << 10);
  auto args = CrossedLevels();
  args.insert(args.end(), {"--only", std::to_string(tree.pid()), "--grace", "2s"});
  Started guardian(GuardianArgs(dir, args), {"HEADROOM_FAKE_NVML_SCRIPT=/nonexistent"});
  const auto events = WaitEvent(dir.File("events.jsonl"), "ended");
  EXPECT_EQ(guardian.Stop(), 0);
  const auto kill = First(events, "kill");
  ASSERT_FALSE(kill.is_null());
  EXPECT_EQ(kill["victim"]["pid"], tree.pid());
  EXPECT_EQ(kill["victim"]["pids"].size(), 3u);
  EXPECT_NE(tree.Reap(5000), -1);
  for (const pid_t p : pids) {
    for (int i = 0; i < 500 && Alive(p); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(Alive(p)) << p;  // reparented workers: init reaps them
  }
}

TEST(GuardianCli, AVictimIgnoringSigtermIsKilledWhenTheGraceEnds) {
  TempDir dir("guardian-term");
  Started stubborn(Balloon({"--cap", "128M", "--ignore-term"}));
  WaitHeld(stubborn.pid(), 120 << 10);
  auto args = CrossedLevels();
  args.insert(args.end(), {"--only", std::to_string(stubborn.pid()), "--grace", "1s"});
  const auto start = std::chrono::steady_clock::now();
  Started guardian(GuardianArgs(dir, args), {"HEADROOM_FAKE_NVML_SCRIPT=/nonexistent"});
  const int status = stubborn.Reap(8000);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto events = WaitEvent(dir.File("events.jsonl"), "escalate");
  EXPECT_EQ(guardian.Stop(), 0);
  ASSERT_NE(status, -1);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  EXPECT_LT(took, 5.0);  // the grace is 1 s
  // On time: when the grace ends, or earlier when this shared machine's MemAvailable keeps
  // falling at the level after the SIGTERM (the policy's "crossing", docs/guard.md).
  const std::string reason = First(events, "escalate").value("reason", "");
  EXPECT_TRUE(reason == "grace" || reason == "crossing") << reason;
  if (reason == "grace") {
    EXPECT_GE(took, 1.0);
  }
}

TEST(GuardianCli, AJobUnderHeadroomGuardIsLeftToItsGuard) {
  TempDir dir("guardian-guarded");
  const std::string journal = dir.File("journal.db");
  // The guard's level is far below MemAvailable: it ends nothing here.
  Started guard({HEADROOM_BINARY, "guard", "--min-available", "64MiB", "--warn-available", "128MiB",
                 "--journal", journal, "--", kGuardianBalloon, "--timeout", "60s", "--cap",
                 "384M"});
  Started bystander(Balloon({"--cap", "128M"}));
  WaitHeld(bystander.pid(), 120 << 10);
  pid_t job = 0;
  for (int i = 0; i < 1000 && job == 0; ++i) {
    for (const auto& d : Descendants(SysRoot("/"), guard.pid()))
      if (d.comm == "balloon") job = d.pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_NE(job, 0);
  WaitHeld(job, 380 << 10);
  auto args = CrossedLevels();
  args.insert(args.end(), {"--dry-run", "--only", std::to_string(guard.pid()), "--only",
                           std::to_string(bystander.pid())});
  auto full = GuardianArgs(dir, args);
  full[2] = "--journal";  // the guard's journal, whose registry says which guards run
  full.insert(full.begin() + 3, journal);
  Started guardian(full, {"HEADROOM_FAKE_NVML_SCRIPT=/nonexistent"});
  const auto events = WaitEvent(dir.File("events.jsonl"), "choice");
  EXPECT_EQ(guardian.Stop(), 0);
  const auto choice = First(events, "choice");
  ASSERT_FALSE(choice.is_null());
  EXPECT_EQ(choice["victim"]["pid"], bystander.pid());
  EXPECT_TRUE(Contains(choice["message"], "balloon pid " + std::to_string(job) + " held"))
      << choice["message"];
  EXPECT_TRUE(Contains(choice["message"], "(left to its guard)")) << choice["message"];
  EXPECT_TRUE(Alive(job));
  EXPECT_NE(guard.Stop(), -1);
}

TEST(GuardianCli, SighupReadsTheConfigurationAgainAndSigpipeIsIgnored) {
  TempDir dir("guardian-hup");
  const std::string config = dir.File("config.toml");
  testing::WriteFile(config, "schema_version = 1\n[guardian]\nkill_level = \"64MiB\"\n");
  Started guardian(GuardianArgs(dir, {"--dry-run", "--only", "/no/such/cgroup"}),
                   {"HEADROOM_CONFIG=" + config, "HEADROOM_FAKE_NVML_SCRIPT=/nonexistent"});
  // Its first reading is under way once the events file exists (the loop writes nothing
  // before an event): wait for the worker to block in its signal wait instead.
  ASSERT_TRUE(testing::WaitGuardianWaiting(guardian.pid()));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(guardian.pid(), SIGPIPE);
  testing::WriteFile(config, "schema_version = 1\n[guardian]\nkill_level = \"96MiB\"\n");
  ::kill(guardian.pid(), SIGHUP);
  const auto events = WaitEvent(dir.File("events.jsonl"), "reload");
  const auto reload = First(events, "reload");
  ASSERT_FALSE(reload.is_null());
  EXPECT_EQ(reload["min_available_bytes"], 96ULL << 20);
  EXPECT_EQ(reload["warn_available_bytes"], 192ULL << 20);
  // A broken file keeps the settings and the guardian.
  testing::WriteFile(config, "schema_version = 1\n[guardian]\nkill_level = \"lots\"\n");
  ::kill(guardian.pid(), SIGHUP);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_TRUE(Alive(guardian.pid()));
  EXPECT_EQ(guardian.Stop(), 0);
}

// Its own pages are locked as the guard's are (docs/guardian.md): VmLck counts the pages it
// touched once it waits for its next reading.
TEST(GuardianCli, ItsOwnPagesAreLockedInMemory) {
#ifdef HEADROOM_SANITIZED
  GTEST_SKIP() << "the sanitizers' runtime turns mlockall into a no-op that returns 0 (its "
                  "mlock interceptors), so VmLck stays 0: checked in the normal build";
#endif
  TempDir dir("guardian-lock");
  Started guardian(GuardianArgs(dir, {"--dry-run", "--only", "/no/such/cgroup"}),
                   {"HEADROOM_FAKE_NVML_SCRIPT=/nonexistent"});
  uint64_t locked_kib = 0;
  ASSERT_TRUE(testing::WaitGuardianWaiting(guardian.pid()));
  if (auto status = SysRoot("/").ReadFile("proc/" + std::to_string(guardian.pid()) + "/status")) {
    const auto at = status->find("VmLck:");
    if (at != std::string::npos) locked_kib = std::stoull(status->substr(at + 6));
  }
  EXPECT_GT(locked_kib, 0u) << "the guardian's pages are not locked (VmLck 0 kB)";
  EXPECT_EQ(guardian.Stop(), 0);
}

// The process that stays up is the lean worker `headroom guardian` execs (docs/guardian.md
// "Its own memory"): the same pid, and none of the libraries only other commands use mapped.
TEST(GuardianCli, TheProcessThatStaysUpIsTheLeanWorker) {
  TempDir dir("guardian-lean");
  Started guardian(GuardianArgs(dir, {"--dry-run", "--only", "/no/such/cgroup"}),
                   {"HEADROOM_FAKE_NVML_SCRIPT=/nonexistent"});
  ASSERT_TRUE(testing::WaitGuardianWaiting(guardian.pid()));
  const std::string proc = "/proc/" + std::to_string(guardian.pid());
  EXPECT_EQ(std::filesystem::read_symlink(proc + "/exe").filename(), "headroom-guardian");
  const auto maps = SysRoot("/").ReadFile("proc/" + std::to_string(guardian.pid()) + "/maps");
  ASSERT_TRUE(maps);
  for (const char* lib :
       {"libcrypto", "libyaml-cpp", "libre2", "libncurses", "libtinfo", "libfmt", "libformw"}) {
    EXPECT_EQ(maps->find(lib), std::string::npos) << lib << " is mapped:\n" << *maps;
  }
#ifndef HEADROOM_SANITIZED  // the sanitizers' runtimes want the shared libstdc++
  EXPECT_EQ(maps->find("libstdc++"), std::string::npos) << *maps;
#endif
  EXPECT_EQ(guardian.Stop(), 0);
}

TEST(GuardianCli, PrintLevelsGivesTheFlagsAndConfigurationsLevelsAsOneLine) {
  TempDir dir("guardian-levels");
  const auto r = testing::RunCli(
      {"guardian", "--min-available", "1GiB", "--grace", "250ms", "--print-levels"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "levels 1073741824 2147483648 250\n");
  const std::string config = dir.File("config.toml");
  testing::WriteFile(config, "schema_version = 1\n[guardian]\nkill_level = \"96MiB\"\n");
  const auto from_config =
      testing::RunCli({"guardian", "--print-levels"}, 20000, {"HEADROOM_CONFIG=" + config});
  EXPECT_EQ(from_config.out, "levels 100663296 201326592 3000\n") << from_config.err;
  testing::WriteFile(config, "schema_version = 1\n[guardian]\nkill_level = \"lots\"\n");
  const auto broken =
      testing::RunCli({"guardian", "--print-levels"}, 20000, {"HEADROOM_CONFIG=" + config});
  EXPECT_EQ(broken.status, 2);
  EXPECT_EQ(broken.out, "");
  EXPECT_NE(broken.err.find("kill_level"), std::string::npos) << broken.err;
}

// The worker refuses words `headroom guardian` would never give: one line, exit 2.
TEST(GuardianCli, TheWorkerRunByHandRefusesWordsItDoesNotKnow) {
  const auto r = testing::RunProgram({HEADROOM_GUARDIAN_WORKER, "min-available=1000",
                                      "warn-available=2000", "grace-ms=0", "colour=red"},
                                     20000, {});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("'colour': unknown setting"), std::string::npos) << r.err;
}

// Without a worker beside the program (a copy of the binary alone), the guardian runs in its
// own process, as it did before the worker existed: a broken install still guards.
TEST(GuardianCli, WithoutAWorkerBesideItTheGuardianRunsInItsOwnProcess) {
  TempDir dir("guardian-alone");
  const auto alone = dir / "headroom";
  std::filesystem::copy_file(HEADROOM_BINARY, alone);
  auto args = GuardianArgs(dir, {"--dry-run", "--only", "/no/such/cgroup"});
  args[0] = alone.string();
  Started guardian(args, {"HEADROOM_FAKE_NVML_SCRIPT=/nonexistent"});
  bool waiting = false;
  for (int i = 0; i < 500 && !waiting; ++i) {
    auto stat = ReadProcStat(SysRoot("/"), guardian.pid());
    waiting = stat && stat->comm == "headroom" && stat->state == 'S';
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(waiting);
  EXPECT_EQ(std::filesystem::read_symlink("/proc/" + std::to_string(guardian.pid()) + "/exe"),
            alone);
  EXPECT_EQ(guardian.Stop(), 0);
}

}  // namespace
}  // namespace headroom
