// RunGuard in-process. Each test that runs the guard does so in a forked helper process: the
// guard locks its memory, renices itself and sets its oom_score_adj, none of which the test
// binary should keep, and the fork-failure test drops to an unprivileged user (root is not
// held to RLIMIT_NPROC). A helper reports what went wrong as text through a pipe.
#include "guard/guard.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing_helper_process.h"

namespace headroom {
namespace {

using testing::InHelper;

// The open descriptors, as /proc/self/fd lists them (the directory's own included, the
// same each time).
int OpenDescriptors() {
  DIR* d = ::opendir("/proc/self/fd");
  if (!d) return -1;
  int n = 0;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  ::closedir(d);
  return n;
}

// The lowest `n` descriptor numbers not in use. RLIMIT_NOFILE bounds the numbers, not the
// count: with the limit at the k-th of them, the next k opens succeed and the one after fails.
std::vector<int> FreeDescriptors(int n) {
  std::vector<bool> used;
  DIR* d = ::opendir("/proc/self/fd");
  if (!d) return {};
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const int fd = std::atoi(e->d_name);
    if (fd >= static_cast<int>(used.size())) used.resize(fd + 1);
    used[fd] = true;
  }
  const int own = ::dirfd(d);  // closed below: free again
  ::closedir(d);
  std::vector<int> out;
  for (int fd = 0; static_cast<int>(out.size()) < n; ++fd) {
    if (fd == own || fd >= static_cast<int>(used.size()) || !used[fd]) out.push_back(fd);
  }
  return out;
}

std::string BlockedSignals() {
  sigset_t set;
  ::sigprocmask(SIG_BLOCK, nullptr, &set);
  std::string out;
  for (int s = 1; s < NSIG; ++s) {
    if (sigismember(&set, s) == 1) out += std::to_string(s) + " ";
  }
  return out;
}

GuardOptions Options(std::vector<std::string> command) {
  GuardOptions o;
  o.command = std::move(command);
  o.min_available_bytes = 1;  // never a kill: the tests are about the paths around it
  o.use_cgroup = false;
  return o;
}

// Runs the guard `runs` times; each must fail with an error starting with `expect_error`
// (when not empty) and leave the descriptors and the mask as they were.
std::string RunsLeaveNothing(const GuardOptions& opt, int runs, const std::string& expect_error) {
  const SysRoot root("/");
  const int fds_before = OpenDescriptors();
  const std::string mask_before = BlockedSignals();
  for (int i = 0; i < runs; ++i) {
    GuardEvents no_events(nullptr);
    auto r = RunGuard(root, opt, no_events, nullptr);
    if (!expect_error.empty()) {
      if (r) return "run " + std::to_string(i) + " did not fail";
      if (EnglishText(r.error().what).rfind(expect_error, 0) != 0)
        return "run " + std::to_string(i) + ": unexpected error: " + EnglishText(r.error().what);
    }
    if (OpenDescriptors() != fds_before)
      return "run " + std::to_string(i) + ": " + std::to_string(fds_before) +
             " descriptors before, " + std::to_string(OpenDescriptors()) + " after";
    if (BlockedSignals() != mask_before)
      return "run " + std::to_string(i) + ": blocked signals were [" + mask_before + "], now [" +
             BlockedSignals() + "]";
  }
  return "";
}

TEST(GuardLeak, AFailedExecLeavesDescriptorsAndSignalMaskAsTheyWere) {
  EXPECT_EQ(InHelper([] {
              return RunsLeaveNothing(Options({"/nonexistent/headroom-test-command"}), 20,
                                      "cannot run /nonexistent/headroom-test-command");
            }),
            "");
}

TEST(GuardLeak, AFailedForkLeavesDescriptorsAndSignalMaskAsTheyWere) {
  EXPECT_EQ(InHelper([]() -> std::string {
              // Root is not held to RLIMIT_NPROC: the helper drops to nobody first, and stays
              // dumpable so that /proc/self/fd is still its own to read.
              if (::getuid() == 0 && ::setresgid(65534, 65534, 65534) != 0) return "setresgid";
              if (::getuid() == 0 && ::setresuid(65534, 65534, 65534) != 0) return "setresuid";
              ::prctl(PR_SET_DUMPABLE, 1);
              const rlimit none{0, 0};
              if (::setrlimit(RLIMIT_NPROC, &none) != 0) return "setrlimit(RLIMIT_NPROC)";
              return RunsLeaveNothing(Options({"true"}), 20, "fork");
            }),
            "");
}

TEST(GuardLeak, AFailedPipeLeavesDescriptorsAndSignalMaskAsTheyWere) {
  EXPECT_EQ(InHelper([]() -> std::string {
              // RLIMIT_NOFILE holds root too. From no descriptor to spare upwards: the guard
              // fails at its /proc/meminfo, then at the exec-error pipe, then runs `true`.
              const int fds_before = OpenDescriptors();
              const std::string mask_before = BlockedSignals();
              rlimit old{};
              ::getrlimit(RLIMIT_NOFILE, &old);
              // Under UBSan, the vptr check of the first shared_ptr control block of a type
              // probes its memory through a pipe, which needs a spare descriptor: the error
              // path's first one (a nested Message in ErrnoError) is made here, with spares.
              (void)ErrnoError("pipe2", EMFILE);
              bool pipe_failed = false;
              std::string seen;
              for (int free_fd : FreeDescriptors(8)) {
                const rlim_t limit = static_cast<rlim_t>(free_fd);
                const rlimit lowered{limit, old.rlim_max};
                if (::setrlimit(RLIMIT_NOFILE, &lowered) != 0) return "setrlimit(RLIMIT_NOFILE)";
                GuardEvents no_events(nullptr);
                auto r = RunGuard(SysRoot("/"), Options({"true"}), no_events, nullptr);
                ::setrlimit(RLIMIT_NOFILE, &old);
                if (!r && EnglishText(r.error().what).rfind("pipe", 0) == 0) pipe_failed = true;
                seen += r ? std::string("ran; ") : EnglishText(r.error().what) + "; ";
                const std::string at = "limit " + std::to_string(limit) + ": ";
                if (OpenDescriptors() != fds_before) return at + "a descriptor leaked";
                if (BlockedSignals() != mask_before) return at + "the signal mask changed";
              }
              return pipe_failed ? "" : "no run failed at pipe2: " + seen;
            }),
            "");
}

TEST(GuardLeak, ManyRunsLeaveDescriptorsAndSignalMaskAsTheyWere) {
  EXPECT_EQ(InHelper([] { return RunsLeaveNothing(Options({"true"}), 10, ""); }), "");
}

std::vector<pid_t> PidsIn(const std::string& path) {
  std::vector<pid_t> out;
  std::ifstream in(path);
  for (pid_t p = 0; in >> p;) out.push_back(p);
  return out;
}

// Issue 29: at the descriptor limit (a flood of connections to the group's port) every way to
// list and signal the job's tree needed a new descriptor: a SIGTERM to the guard reached 1 of 3
// processes and the job's children outlived the guard. Here the guard's own descriptors are
// used up once the job's three processes run, then the guard gets SIGTERM.
TEST(GuardKillPath, ASigtermAtTheDescriptorLimitReachesTheWholeTree) {
  char dir[] = "/tmp/headroom-guard-fds-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string pids = std::string(dir) + "/pids";
  const std::string report = InHelper([&]() -> std::string {
    const rlimit low{256, 256};
    if (::setrlimit(RLIMIT_NOFILE, &low) != 0) return "setrlimit(RLIMIT_NOFILE)";
    GuardOptions opt = Options({"sh", "-c",
                                "sleep 60 & echo $! >> \"$0\"; sleep 60 & echo $! >> \"$0\"; "
                                "echo $$ >> \"$0\"; wait",
                                pids});
    opt.timeout = std::chrono::milliseconds(30000);  // a backstop: the test fails, never hangs
    opt.tick_period = std::chrono::milliseconds(10);
    std::vector<int> used_up;
    bool sent = false;
    opt.on_tick = [&](uint64_t, double) {
      if (sent || PidsIn(pids).size() < 3) return;
      for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) used_up.push_back(fd);
      sent = true;
      ::kill(::getpid(), SIGTERM);  // blocked: the guard reads it from its signalfd
    };
    GuardEvents no_events(nullptr);
    auto r = RunGuard(SysRoot("/"), opt, no_events, nullptr);
    const size_t used = used_up.size();
    for (int fd : used_up) ::close(fd);
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    std::string alive;
    for (pid_t p : PidsIn(pids)) {
      if (::kill(p, 0) == 0) {
        alive += std::to_string(p) + " ";
        ::kill(p, SIGKILL);
      }
    }
    if (!r) return EnglishText(r.error().what);
    if (!sent) return "the job's three processes never came up";
    if (used == 0) return "no descriptor was left to use up";
    if (!alive.empty()) return "outlived the guard: " + alive;
    if (r->forwarded_signal != SIGTERM) return "the SIGTERM was not passed on";
    if (r->timed_out) return "ended by the timeout, not the SIGTERM";
    return "";
  });
  ::unlink(pids.c_str());
  ::rmdir(dir);
  EXPECT_EQ(report, "");
}

std::vector<nlohmann::json> ParseLines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    out.push_back(nlohmann::json::parse(line, nullptr, false));
  }
  return out;
}

TEST(GuardEvents, StringsAreEscapedAndTheLineParsesBack) {
  char path[] = "/tmp/headroom-guard-events-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  std::FILE* file = ::fdopen(fd, "w");
  ASSERT_NE(file, nullptr);
  const std::string note = "a \"quoted\" word, a back\\slash,\na second line and a tab\t";
  {
    GuardEvents events(file);
    events.Emit("note", {{"text", note}});
    events.Emit("kill", {{"processes", 3}, {"after_term_s", 1.5}});
    events.Emit("exit", {{"killed_by_guard", false}});
  }
  std::fclose(file);
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u);  // the newline in the note did not split its line
  const auto events = ParseLines(path);
  ::unlink(path);
  ASSERT_FALSE(events[0].is_discarded()) << lines[0];
  EXPECT_EQ(events[0]["type"], "note");
  EXPECT_EQ(events[0]["text"], note);
  EXPECT_TRUE(events[0]["monotonic_s"].is_number());
  EXPECT_TRUE(events[0]["wall_time"].is_string());
  // The fields in their order, after the three that every line has; seconds to the ms.
  EXPECT_NE(lines[1].find(",\"processes\":3,\"after_term_s\":1.500}"), std::string::npos)
      << lines[1];
  EXPECT_EQ(lines[1].rfind("{\"type\":\"kill\",\"wall_time\":\"", 0), 0u) << lines[1];
  EXPECT_NE(lines[2].find("\"killed_by_guard\":false}"), std::string::npos) << lines[2];
}

TEST(GuardEvents, ARunWritesStartAndExitAndPassesTheStatusThrough) {
  char path[] = "/tmp/headroom-guard-run-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  const std::string p = path;
  EXPECT_EQ(InHelper([&]() -> std::string {
              std::FILE* file = std::fopen(p.c_str(), "w");
              if (!file) return "fopen";
              GuardEvents events(file);
              auto r = RunGuard(SysRoot("/"), Options({"sh", "-c", "exit 3"}), events, nullptr);
              std::fclose(file);
              if (!r) return EnglishText(r.error().what);
              if (r->exit_status != 3) return "exit status " + std::to_string(r->exit_status);
              if (r->killed) return "killed";
              return "";
            }),
            "");
  const auto events = ParseLines(p);
  ::unlink(path);
  ASSERT_GE(events.size(), 2u);
  for (const auto& e : events) EXPECT_FALSE(e.is_discarded());
  EXPECT_EQ(events.front()["type"], "start");
  EXPECT_GT(events.front()["pid"].get<int>(), 0);
  EXPECT_EQ(events.front()["cgroup"], "none (--no-cgroup)");
  EXPECT_EQ(events.back()["type"], "exit");
  EXPECT_EQ(events.back()["exit_status"], 3);
  EXPECT_EQ(events.back()["killed_by_guard"], false);
}

}  // namespace
}  // namespace headroom
