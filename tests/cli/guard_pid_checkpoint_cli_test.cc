// Checkpoint before the kill for a job attached with `guard --pid` (docs/guard.md, "A job
// attached with --pid"): the test starts a real PyTorch loop (tests/tools/leaky_trainer.py,
// Debian's python3-torch under /usr/bin/python3, CPU) itself, with the companion's
// environment as a user would (HEADROOM_STEP_RECORDS only: the companion handles SIGUSR1 by
// default), then attaches `headroom guard --pid PID --step-records FILE`. Memory safety as in
// guard_checkpoint_cli_test.cc: levels from the settled MemAvailable of the moment (warning
// 1.25 GiB, kill 2.5 GiB below it), the leak capped at 3.5 GiB, the loop ending by itself
// after 90 s; the loop is the test's child in its own process group, killed (the group) on
// every way out of the test. It fills memory: it is in HEADROOM_MEMORY_TESTS (RUN_SERIAL,
// GuardCheckpointPid.*).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/bytes.h"
#include "run_cli.h"
#include "testing_files.h"
#include "testing_memory.h"
#include "testing_torch_jobs.h"

namespace headroom {
namespace {

using testing::FirstEvent;
using testing::HaveTorch;
using testing::ReadJsonLines;
using testing::RunCli;
using testing::SettledAvailable;
using testing::TempDir;
using testing::UnparsedLines;
namespace fs = std::filesystem;

// A job the test starts, in its own process group, with `env` added; the whole group is
// killed and the job reaped when this goes out of scope.
class OwnJob {
 public:
  OwnJob(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      // As a user's shell starts it: no signal blocked (another test of this process may
      // have blocked some, guard/child.h SignalScope) and SIGUSR1's default action.
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      ::signal(SIGUSR1, SIG_DFL);
      const int null = ::open("/dev/null", O_WRONLY);
      if (null >= 0) ::dup2(null, 1);
      std::vector<std::string> copy = argv;
      std::vector<char*> args;
      for (auto& a : copy) args.push_back(a.data());
      args.push_back(nullptr);
      testing::SetChildEnvironment(env);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    if (pid_ > 0) ::setpgid(pid_, pid_);  // either side may run first
  }
  OwnJob(const OwnJob&) = delete;
  OwnJob& operator=(const OwnJob&) = delete;
  ~OwnJob() {
    if (pid_ <= 0) return;
    if (reaped_) return;
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }
  // The job's wait status once it has ended (the guard killed it); nullopt while it runs.
  std::optional<int> Reap(std::chrono::seconds within) {
    const auto until = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < until) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        reaped_ = true;
        ::kill(-pid_, SIGKILL);  // the rest of its group, if any
        return status;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return std::nullopt;
  }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

// Waits (at most `within`) for a start record from `pid` in the step records.
bool Announced(const std::string& records, pid_t pid, std::chrono::seconds within) {
  const auto until = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < until) {
    for (const auto& r : ReadJsonLines(records)) {
      if (r.is_object() && r["kind"] == "start" && r["pid"] == pid) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

TEST(GuardCheckpointPid, AnAttachedLoopSavesAtTheWarningLevelThenIsKilled) {
  if (!HaveTorch()) GTEST_SKIP() << "no python3-torch under /usr/bin/python3";
  TempDir dir;
  const std::string ckpt = dir.File("ckpt.pt");
  const std::string records = dir.File("steps.jsonl");
  const std::string events_path = dir.File("events.jsonl");
  // Records of an earlier run in the same file: a start record naming a process that is not
  // in the job's tree (this test's own, which SIGUSR1 would end). The guard reads the file
  // from its start and asks only processes of the attached tree.
  std::ofstream(records) << R"({"schema":"headroom.step/1","pid":)" << ::getpid()
                         << R"(,"kind":"start","wall":1,"mono":1,"framework":"plain",)"
                            R"("signal":10,"request_file":false})"
                         << "\n";
  const uint64_t now = SettledAvailable();
  const uint64_t warn = now - 1280 * kMiB, kill = now - 2560 * kMiB;
  // 24 MiB every 0.1 s, about 240 MiB/s: the 1.25 GiB from the warning to the kill level take
  // about 5 s; a save needs well under the 1 s granted. Torch's import (a few hundred MiB,
  // seconds) comes first, while the guard attaches.
  OwnJob job({"/usr/bin/python3", testing::SourcePath("tests/tools/leaky_trainer.py"), ckpt, "24",
              "0.1", "3584", "90"},
             {"PYTHONPATH=" + testing::SourcePath("python"), "HEADROOM_STEP_RECORDS=" + records});
  ASSERT_GT(job.pid(), 0);
  // Attached to a run already going: its start record is in the file before the guard is.
  ASSERT_TRUE(Announced(records, job.pid(), std::chrono::seconds(60)));
  const auto r = RunCli(
      {"guard", "--json", "--no-journal", "--pid", std::to_string(job.pid()), "--step-records",
       records, "--min-available", std::to_string(kill) + "B", "--warn-available",
       std::to_string(warn) + "B", "--checkpoint-grace", "1s", "--events", events_path},
      150000);
  const auto status = job.Reap(std::chrono::seconds(10));
  ASSERT_TRUE(status) << "the job outlived its guard: " << r.err;
  EXPECT_TRUE(WIFSIGNALED(*status));
  EXPECT_EQ(r.status, 99) << r.err;
  const auto summary = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(summary.is_discarded()) << r.out << r.err;
  EXPECT_EQ(summary["killed_by_guard"], true) << r.err;
  const auto& cp = summary["checkpoint"];
  ASSERT_TRUE(cp.is_object()) << r.out;
  EXPECT_EQ(cp["companion_seen"], true);
  ASSERT_EQ(cp["asked"], true) << cp.dump() << r.err;
  EXPECT_EQ(cp["how"], "SIGUSR1");
  EXPECT_EQ(cp["processes_asked"], 1);  // the job's process, not the earlier run's
  EXPECT_EQ(cp["finished"], true) << cp.dump();
  EXPECT_EQ(cp["ok"], true) << cp.dump();
  EXPECT_EQ(cp["path"], ckpt);
  EXPECT_EQ(cp["source"], "loop");
  EXPECT_LT(cp["asked_available_bytes"].get<uint64_t>(), warn);
  EXPECT_GT(cp["asked_available_bytes"].get<uint64_t>(), kill);
  // Asked below the warning level, saved, then the kill at the kill level.
  const auto events = ReadJsonLines(events_path);
  EXPECT_EQ(UnparsedLines(events), 0u);  // the guard writes whole lines
  const int ask = FirstEvent(events, "checkpoint_ask");
  const int end = FirstEvent(events, "checkpoint_end");
  const int trigger = FirstEvent(events, "trigger");
  ASSERT_GE(ask, 0);
  ASSERT_GT(end, ask);
  ASSERT_GT(trigger, end);
  EXPECT_EQ(events[end]["path"], ckpt);
  // The checkpoint loads with torch.load and holds the step it was taken at.
  ASSERT_TRUE(fs::exists(ckpt));
  const std::string got = dir.File("step.txt");
  const std::string load =
      "/usr/bin/python3 -c \"import torch, sys; print(torch.load(sys.argv[1])['step'])\" " + ckpt +
      " > " + got;
  ASSERT_EQ(std::system(load.c_str()), 0);
  std::ifstream in(got);
  int64_t step = -1;
  in >> step;
  EXPECT_EQ(step, cp["step"].get<int64_t>());
  EXPECT_GT(step, 0);
}

// Not memory tests: --pid's companion flags with no pressure.
TEST(GuardPidCompanion, WithoutStepRecordsTheSummarySaysWhyNothingCanBeAsked) {
  TempDir dir;
  OwnJob job({"/bin/sleep", "1"}, {});
  ASSERT_GT(job.pid(), 0);
  const auto r = RunCli({"guard", "--json", "--no-journal", "--min-available", "64M", "--pid",
                         std::to_string(job.pid())},
                        30000);
  EXPECT_EQ(r.status, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(summary.is_discarded()) << r.out << r.err;
  const auto& cp = summary["checkpoint"];
  ASSERT_TRUE(cp.is_object()) << r.out;
  EXPECT_EQ(cp["asked"], false);
  EXPECT_EQ(cp["not_asked"],
            "no step records: give --step-records FILE, the HEADROOM_STEP_RECORDS the job was "
            "started with");
  // On the terminal the reason is not repeated on every run: only when memory came near the
  // levels (here it never did).
  OwnJob shown({"/bin/sleep", "1"}, {});
  const auto t = RunCli(
      {"guard", "--no-journal", "--min-available", "64M", "--pid", std::to_string(shown.pid())},
      30000);
  EXPECT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.err.find("guard:"), std::string::npos) << t.err;
  EXPECT_EQ(t.err.find("checkpoint"), std::string::npos) << t.err;
  // --no-checkpoint: nothing asked, nothing said.
  OwnJob quiet({"/bin/sleep", "1"}, {});
  const auto q = RunCli({"guard", "--json", "--no-journal", "--no-checkpoint", "--min-available",
                         "64M", "--pid", std::to_string(quiet.pid())},
                        30000);
  EXPECT_EQ(q.status, 0) << q.err;
  const auto quiet_summary = nlohmann::json::parse(q.out, nullptr, false);
  ASSERT_FALSE(quiet_summary.is_discarded()) << q.out << q.err;
  EXPECT_TRUE(quiet_summary["checkpoint"].is_null());
}

TEST(GuardPidCompanion, CompanionFlagsThatCannotApplyAreUsageErrors) {
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const std::vector<Case> cases = {
      {{"guard", "--hooks", "--pid", "1"},
       "--hooks: applies to a job started by the guard, not --pid"},
      {{"guard", "--checkpoint-request", "/tmp/req", "--", "true"},
       "--checkpoint-request: applies to --pid"},
      {{"guard", "--pid", "12345", "--step-records", "/tmp/s.jsonl", "--checkpoint-signal", "none"},
       "--checkpoint-request FILE"},
  };
  for (const auto& c : cases) {
    const auto r = RunCli(c.args);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find(c.err), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace headroom
