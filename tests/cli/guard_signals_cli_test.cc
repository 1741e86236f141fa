// `headroom guard` holding its ground (issue 16, docs/guard.md "Signals to the guard"): the
// signals it ignores, forwards and escalates, its death, and what --pid refuses. Real guards,
// real jobs, real signals; no job here allocates memory, so these run beside other tests.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "run_cli.h"
#include "sys/meminfo.h"
#include "sys/processes.h"
#include "testing_files.h"
#include "testing_memory.h"
#include "testing_processes.h"

namespace headroom {
namespace {

using testing::Alive;

using std::chrono::milliseconds;
using testing::TempDir;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Waits up to `limit` for `done`, checking every 20 ms.
template <typename F>
bool WaitFor(F done, milliseconds limit = milliseconds(10000)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return true;
}

// A guard started in the background: stdout and stderr to files, the caller's process as its
// parent, killed and reaped by the destructor if the test did not reap it.
class BackgroundGuard {
 public:
  BackgroundGuard(const TempDir& dir, std::vector<std::string> args, int stderr_fd = -1)
      : out_(dir.File("out")), err_(dir.File("err")) {
    args.insert(args.begin(), {HEADROOM_BINARY, "guard"});
    pid_ = fork();
    if (pid_ == 0) {
      const int out = open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      const int err =
          stderr_fd >= 0 ? stderr_fd : open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2(out, 1);
      dup2(err, 2);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      testing::SetChildEnvironment({});
      execv(HEADROOM_BINARY, argv.data());
      _exit(127);
    }
  }
  ~BackgroundGuard() {
    if (pid_ > 0 && !status_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    for (pid_t p : jobs_) {
      if (Alive(p)) kill(p, SIGKILL);
    }
  }
  pid_t pid() const { return pid_; }
  std::string out() const { return ReadAll(out_); }
  std::string err() const { return ReadAll(err_); }
  // The job: the guard's child named `comm`, once it is there (0 if it never came).
  pid_t Job(const std::string& comm) {
    pid_t job = 0;
    WaitFor([&] {
      for (const auto& d : Descendants(SysRoot("/"), pid_)) {
        if (d.ppid == pid_ && d.comm == comm) job = d.pid;
      }
      return job != 0;
    });
    if (job) jobs_.push_back(job);
    return job;
  }
  // Still running (not exited) after `wait`.
  bool RunningAfter(milliseconds wait) {
    std::this_thread::sleep_for(wait);
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) status_ = status;
    return !status_;
  }
  // The guard's exit status (128 + signal when killed), waiting at most `limit`.
  std::optional<int> Exit(milliseconds limit = milliseconds(10000)) {
    WaitFor(
        [&] {
          int status = 0;
          if (!status_ && waitpid(pid_, &status, WNOHANG) == pid_) status_ = status;
          return status_.has_value();
        },
        limit);
    if (!status_) return std::nullopt;
    return WIFEXITED(*status_) ? WEXITSTATUS(*status_) : 128 + WTERMSIG(*status_);
  }

 private:
  std::string out_, err_;
  pid_t pid_ = -1;
  std::optional<int> status_;
  std::vector<pid_t> jobs_;
};

pid_t ParentOf(pid_t pid) {
  auto s = ReadProcStat(SysRoot("/"), pid);
  return s ? s->ppid : 0;
}

TEST(GuardSignals, Usr1Usr2AlrmAndPipeAreIgnoredAndTheJobStaysGuarded) {
  TempDir dir;
  BackgroundGuard guard(
      dir, {"--no-cgroup", "--no-journal", "--min-available", "64M", "--", "sleep", "600"});
  const pid_t job = guard.Job("sleep");
  ASSERT_GT(job, 0) << guard.err();
  for (int sig : {SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE}) {
    ASSERT_EQ(kill(guard.pid(), sig), 0);
    EXPECT_TRUE(guard.RunningAfter(milliseconds(200))) << strsignal(sig) << guard.err();
    EXPECT_TRUE(Alive(job)) << strsignal(sig);
    EXPECT_EQ(ParentOf(job), guard.pid()) << strsignal(sig);
  }
  // SIGTERM still ends the job, and the guard returns its status.
  ASSERT_EQ(kill(guard.pid(), SIGTERM), 0);
  EXPECT_EQ(guard.Exit(), 128 + SIGTERM) << guard.err();
  EXPECT_FALSE(Alive(job));
}

TEST(GuardSignals, SigquitIsPassedToTheJob) {
  TempDir dir;
  // No core files: the job and its sleep get SIGQUIT too.
  BackgroundGuard guard(dir, {"--no-cgroup", "--no-journal", "--min-available", "64M", "--", "sh",
                              "-c", "ulimit -c 0; trap 'exit 5' QUIT; sleep 600 & wait"});
  ASSERT_TRUE(WaitFor([&] {
    for (const auto& d : Descendants(SysRoot("/"), guard.pid())) {
      if (d.comm == "sleep") return true;
    }
    return false;
  })) << guard.err();
  ASSERT_EQ(kill(guard.pid(), SIGQUIT), 0);
  EXPECT_EQ(guard.Exit(), 5) << guard.err();
}

TEST(GuardSignals, AClosedStderrIsANoteNotTheGuardsEnd) {
  TempDir dir;
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  close(pipe_fds[0]);  // a `tee` that died: every write to stderr is EPIPE (and SIGPIPE)
  // The warning level above MemAvailable: a warning line at the first reading.
  BackgroundGuard guard(dir,
                        {"--json", "--no-cgroup", "--no-journal", "--min-available", "64M",
                         "--warn-available", "99%", "--", "sleep", "0.5"},
                        pipe_fds[1]);
  close(pipe_fds[1]);
  EXPECT_EQ(guard.Exit(), 0);
  const auto j = nlohmann::json::parse(guard.out(), nullptr, false);
  ASSERT_TRUE(j.is_object()) << guard.out();
  EXPECT_EQ(j["warnings"], 1);
  bool noted = false;
  for (const auto& n : j["notes"]) {
    noted |= n.get<std::string>().find("a warning line could not be written") != std::string::npos;
  }
  EXPECT_TRUE(noted) << j.dump();
}

TEST(GuardSignals, ARepeatedSigtermEscalatesToSigkillAfterTheGrace) {
  TempDir dir;
  // The job and its sleeps ignore SIGTERM (an ignored signal stays ignored across exec).
  BackgroundGuard guard(
      dir, {"--no-cgroup", "--no-journal", "--min-available", "64M", "--grace", "500ms", "--", "sh",
            "-c", "trap '' TERM; echo ready >&2; while :; do sleep 0.05; done"});
  ASSERT_TRUE(WaitFor([&] { return guard.err().find("ready") != std::string::npos; }));
  ASSERT_EQ(kill(guard.pid(), SIGTERM), 0);
  // One SIGTERM is passed on and never escalates by itself, whatever the grace.
  EXPECT_TRUE(guard.RunningAfter(milliseconds(900))) << guard.err();
  ASSERT_EQ(kill(guard.pid(), SIGTERM), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(guard.Exit(milliseconds(5000)), 128 + SIGKILL) << guard.err();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(3000));
}

TEST(GuardSignals, AGuardKilledWithSigkillTakesItsJobWithIt) {
  TempDir dir;
  BackgroundGuard guard(
      dir, {"--no-cgroup", "--no-journal", "--min-available", "64M", "--", "sleep", "600"});
  const pid_t job = guard.Job("sleep");
  ASSERT_GT(job, 0) << guard.err();
  ASSERT_EQ(kill(guard.pid(), SIGKILL), 0);
  EXPECT_EQ(guard.Exit(), 128 + SIGKILL);
  EXPECT_TRUE(WaitFor([&] { return !Alive(job); }, milliseconds(3000)))
      << "the job outlived its guard";
}

TEST(GuardSignals, PidRefusesInitTheGuardItselfAndItsAncestors) {
  auto r = testing::RunCli({"guard", "--no-journal", "--pid", "1"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--pid 1: is init"), std::string::npos) << r.err;
  // This test process is the guard's parent.
  r = testing::RunCli({"guard", "--no-journal", "--pid", std::to_string(getpid())});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("is an ancestor of the guard"), std::string::npos) << r.err;
  // The shell execs the guard, so $$ is the guard's own PID.
  r = testing::RunProgram(
      {"/bin/sh", "-c", "exec \"$0\" guard --no-journal --pid $$", HEADROOM_BINARY});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("is the guard itself"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(GuardSignals, PidTakesTheWholeTreeBeforeSignallingAnyOfIt) {
  TempDir dir;
  const std::string pids = dir.File("pids");
  const pid_t top = fork();
  if (top == 0) {
    setsid();
    execl("/bin/sh", "sh", "-c",
          ("sleep 3001 & echo $! >> " + pids + "; sleep 3002 & echo $! >> " + pids + "; wait")
              .c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  std::vector<pid_t> sleeps;
  ASSERT_TRUE(WaitFor([&] {
    sleeps.clear();
    std::ifstream in(pids);
    for (pid_t p = 0; in >> p;) sleeps.push_back(p);
    return sleeps.size() == 2;
  }));
  // A level above MemAvailable: SIGTERM to the tree at the first reading.
  const auto r = testing::RunCli(
      {"guard", "--json", "--no-journal", "--pid", std::to_string(top), "--min-available",
       std::to_string(testing::CrossedLevelBytes()) + "B", "--grace", "1s"});
  if (r.status != 99) kill(-top, SIGKILL);  // the guard did not act: never wait for sleep 3001
  waitpid(top, nullptr, 0);
  EXPECT_EQ(r.status, 99) << r.err;
  for (pid_t p : sleeps) {
    EXPECT_FALSE(Alive(p)) << "sleep " << p << " escaped the guard";
    if (Alive(p)) kill(p, SIGKILL);
  }
}

}  // namespace
}  // namespace headroom
