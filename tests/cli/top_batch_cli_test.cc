// `headroom top` without a terminal: --once, --iterations and --json through the real
// binary (RunCli), usage errors, and the levels of a real running guard with a real child.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "run_cli.h"
#include "sys/processes.h"
#include "testing_files.h"
#include "top/text_width.h"
#include "top_cli.h"
#include "top_testing.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using testing::RunCli;

using testing::Contains;
using testing::kGb10Idle;
using testing::kPsBox;
using testing::kTopSource;

std::vector<std::string> FakeEnv(const testing::TempDir& dir, const std::string& scenario) {
  testing::WriteFile(dir / "nvml.txt", "scenario " + scenario + "\n");
  return {"HEADROOM_FAKE_NVML_SCRIPT=" + (dir / "nvml.txt").string(),
          "HEADROOM_JOURNAL=" + (dir / "j.db").string(), "LANG=C.UTF-8", "LC_ALL=C.UTF-8",
          "COLUMNS=100"};
}

TEST(TopCli, OnceTextIsOneFramePlainWithinTheWidth) {
  testing::TempDir dir("top-once");
  const auto r = RunCli({"top", "--once", "--root", kPsBox, "--nvml-lib", HEADROOM_FAKE_NVML_PATH},
                        20000, FakeEnv(dir, "discrete"));
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* part : {"headroom top", "NVIDIA H200", "processes holding the pool: 5", "vllm",
                           "events:", "throttle_set"}) {
    EXPECT_TRUE(Contains(r.out, part)) << part << "\n" << r.out;
  }
  EXPECT_FALSE(Contains(r.out, "q quit"));  // no keys are read
  EXPECT_FALSE(Contains(r.out, "\x1b"));    // no escape sequences
  testing::ScopedUtf8Locale utf8;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(DisplayWidth(line), 100u) << line;
}

TEST(TopCli, OnceInTraditionalChineseFitsTheWidth) {
  testing::TempDir dir("top-once-zh");
  auto env = FakeEnv(dir, "gb10");
  env.push_back("LANG=zh_TW.UTF-8");
  env.push_back("LC_ALL=zh_TW.UTF-8");
  env.push_back("COLUMNS=60");
  const auto r = RunCli(
      {"top", "--once", "--root", kGb10Idle, "--nvml-lib", HEADROOM_FAKE_NVML_PATH}, 20000, env);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "記憶體池")) << r.out;
  testing::ScopedUtf8Locale utf8;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(DisplayWidth(line), 60u) << line;
}

TEST(TopCli, JsonOnceAndIterations) {
  testing::TempDir dir("top-json");
  const auto env = FakeEnv(dir, "discrete");
  auto r = RunCli({"top", "--json", "--root", kPsBox, "--nvml-lib", HEADROOM_FAKE_NVML_PATH}, 20000,
                  env);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["platform"]["kind"], "discrete");
  EXPECT_EQ(j["gpu"]["present"], true);
  EXPECT_EQ(j["gpu"]["power_mw"], 350'000);
  EXPECT_EQ(j["gpu"]["clock_event_reason_names"],
            nlohmann::json({"sw_power_cap", "sw_thermal_slowdown"}));
  EXPECT_EQ(j["memory"]["total_bytes"], 127'600'748ULL * 1024);
  EXPECT_EQ(j["processes"].size(), 5u);
  EXPECT_EQ(j["processes"][0]["pid"], 1111);  // pid order in JSON: sorting is the view's
  EXPECT_EQ(j["processes"][0]["gpu_bytes"], 40ULL << 30);
  EXPECT_EQ(j["guards"], nlohmann::json::array());

  r = RunCli({"top", "--json", "--iterations", "3", "--interval", "100ms", "--root", kPsBox,
              "--nvml-lib", HEADROOM_FAKE_NVML_PATH},
             20000, env);
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream lines(r.out);
  std::vector<nlohmann::json> objects;
  for (std::string line; std::getline(lines, line);) objects.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(objects.size(), 3u) << r.out;
  EXPECT_LT(objects[0]["wall_time"].get<std::string>(), objects[2]["wall_time"].get<std::string>());
  EXPECT_LT(objects[0]["gpu"]["temperature_c"].get<int>(),
            objects[2]["gpu"]["temperature_c"].get<int>());
}

// Regression: `top --iterations N` died of SIGTERM (143) and SIGHUP (129) where docs/top.md says
// status 0. Real signals to the real binary, after its first frame.
TEST(TopCli, IterationsEndWithStatusZeroOnStopSignals) {
  testing::TempDir dir("top-signals");
  const auto env = FakeEnv(dir, "discrete");
  for (int sig : {SIGTERM, SIGHUP, SIGINT}) {
    SCOPED_TRACE(strsignal(sig));
    int out[2];
    ASSERT_EQ(pipe2(out, O_CLOEXEC), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      dup2(out[1], 1);
      for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
      execl(HEADROOM_BINARY, HEADROOM_BINARY, "top", "--json", "--iterations", "1000", "--interval",
            "100ms", "--root", kPsBox.c_str(), "--nvml-lib", HEADROOM_FAKE_NVML_PATH,
            static_cast<char*>(nullptr));
      _exit(127);
    }
    close(out[1]);
    // The first frame is one JSON line: the loop is running.
    std::string got;
    char buf[4096];
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (got.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      const ssize_t n = read(out[0], buf, sizeof buf);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    ASSERT_NE(got.find('\n'), std::string::npos) << got;
    ASSERT_EQ(kill(pid, sig), 0);
    int status = 0;
    pid_t done = 0;
    for (int i = 0; i < 500 && done == 0; ++i) {
      done = waitpid(pid, &status, WNOHANG);
      if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (done == 0) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      ADD_FAILURE() << "still running 10 s after the signal";
    }
    close(out[0]);
    EXPECT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
    EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
  }
}

TEST(TopCli, JsonWithoutGpuSaysWhyAndIsEnglish) {
  testing::TempDir dir("top-json-nogpu");
  auto env = FakeEnv(dir, "discrete");
  env.push_back("LANG=zh_TW.UTF-8");
  env.push_back("LC_ALL=zh_TW.UTF-8");
  const auto r = RunCli({"top", "--once", "--json", "--root", kGb10Idle, "--nvml-lib",
                         "/nonexistent/libnvidia-ml.so.1"},
                        20000, env);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "headroom: nvml: dlopen(/nonexistent/libnvidia-ml.so.1)")) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gpu"]["present"], false);
  EXPECT_TRUE(Contains(j["gpu"]["note"].get<std::string>(), "dlopen")) << j.dump();
  EXPECT_TRUE(j["gpu"]["temperature_c"].is_null());
  EXPECT_EQ(j["platform"]["kind"], "none");
  EXPECT_EQ(j["psi"]["memory_some_avg10_pct"], 0.0);
  EXPECT_FALSE(Contains(r.out, "記憶體"));
}

TEST(TopCli, UsageErrorsAreOneLineWithStatusTwo) {
  struct Row {
    std::vector<std::string> args;
    std::string message;
  };
  const Row rows[] = {
      {{"--interval", "10ms", "--once"}, "--interval: 10ms is below the minimum of 100ms"},
      {{"--interval", "soon", "--once"}, "--interval:"},
      {{"--sort", "rss", "--once"}, "--sort: 'rss' is not one of mem, pid, name"},
      {{"--iterations", "0"}, "--iterations:"},
      {{"--iterations", "2", "--once"}, "--once and --iterations: give one of them"},
      {{"--root", "/nonexistent", "--once"}, "--root: /nonexistent has no proc/ directory"},
      {{"--bogus"}, "top:"},
      // Not a terminal, and no batch flag.
      {{"--root", kPsBox}, "stdin and stdout must be a terminal"},
  };
  for (const Row& row : rows) {
    std::vector<std::string> args = {"top"};
    args.insert(args.end(), row.args.begin(), row.args.end());
    const auto r = RunCli(args, 10000, {"LANG=C.UTF-8", "LC_ALL=C.UTF-8"});
    EXPECT_EQ(r.status, 2) << row.message << "\n" << r.err;
    EXPECT_TRUE(r.err.starts_with("headroom: top: ")) << r.err;
    EXPECT_TRUE(Contains(r.err, row.message)) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

// A real `headroom guard` running a real child: top shows its levels while it lives and
// forgets them when it ends, and a guard killed with SIGKILL (its run left "running" in the
// journal) is not shown either.
// Kills what is left of a guard and its job when a test ends early (a failed ASSERT).
struct GuardCleanup {
  std::vector<pid_t> guards;
  ~GuardCleanup() {
    for (pid_t g : guards) {
      for (const auto& p : Descendants(SysRoot("/"), g)) ::kill(p.pid, SIGKILL);
      if (::kill(g, SIGKILL) == 0) ::waitpid(g, nullptr, 0);
    }
  }
};

pid_t StartGuard(const fs::path& journal, const std::string& kill_level,
                 const std::string& warn_level) {
  return testing::StartCli({"guard", "--journal", journal.string(), "--no-cgroup",
                            "--min-available", kill_level, "--warn-available", warn_level, "--",
                            "sleep", "60"});
}

nlohmann::json TopJson(const fs::path& journal) {
  const auto r = RunCli({"top", "--json", "--journal", journal.string()}, 20000,
                        {"HEADROOM_NVML_LIB=/nonexistent.so"});
  if (r.status != 0) return nlohmann::json(nullptr);
  return nlohmann::json::parse(r.out, nullptr, false);
}

nlohmann::json WaitForGuards(const fs::path& journal, size_t n) {
  nlohmann::json j;
  for (int i = 0; i < 100; ++i) {
    j = TopJson(journal);
    if (j.is_object() && j["guards"].size() == n) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return j;
}

TEST(TopCli, ShowsTheLevelsOfARealRunningGuard) {
  testing::TempDir dir("top-guard");
  const fs::path journal = dir / "journal.db";
  GuardCleanup cleanup;
  const pid_t guard = StartGuard(journal, "1GiB", "2GiB");
  ASSERT_GT(guard, 0);
  cleanup.guards.push_back(guard);
  auto j = WaitForGuards(journal, 1);
  ASSERT_EQ(j["guards"].size(), 1u) << j.dump();
  EXPECT_EQ(j["guards"][0]["guard_pid"], guard);
  EXPECT_EQ(j["guards"][0]["kill_below_bytes"], 1ULL << 30);
  EXPECT_EQ(j["guards"][0]["warn_below_bytes"], 2ULL << 30);
  EXPECT_EQ(j["guards"][0]["command"], nlohmann::json({"sleep", "60"}));
  const auto text = RunCli(
      {"top", "--once", "--journal", journal.string()}, 20000,
      {"HEADROOM_NVML_LIB=/nonexistent.so", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "COLUMNS=120"});
  EXPECT_TRUE(Contains(
      text.out, fmt::format("pid {}: warn level 2.00 GiB (W) · kill level 1.00 GiB (K)", guard)))
      << text.out;

  // A second guard, killed with SIGKILL: its run stays "running" in the journal, its pid is
  // gone, and top does not show it. Its job (sleep) is found first, to be cleaned up.
  const pid_t killed = StartGuard(journal, "1GiB", "3GiB");
  ASSERT_GT(killed, 0);
  cleanup.guards.push_back(killed);
  j = WaitForGuards(journal, 2);
  ASSERT_EQ(j["guards"].size(), 2u) << j.dump();
  const auto job = Descendants(SysRoot("/"), killed);
  ASSERT_EQ(::kill(killed, SIGKILL), 0);
  ::waitpid(killed, nullptr, 0);
  cleanup.guards.pop_back();
  for (const auto& p : job) ::kill(p.pid, SIGKILL);
  j = WaitForGuards(journal, 1);
  ASSERT_EQ(j["guards"].size(), 1u) << j.dump();
  EXPECT_EQ(j["guards"][0]["guard_pid"], guard);

  // The first guard ends (SIGTERM is forwarded to its job): no guard left.
  ASSERT_EQ(::kill(guard, SIGTERM), 0);
  int status = 0;
  ::waitpid(guard, &status, 0);
  cleanup.guards.clear();
  j = WaitForGuards(journal, 0);
  EXPECT_EQ(j["guards"].size(), 0u) << j.dump();
}

// The other two commands that guard: a sweep (its trials, at its kill level, with no warning
// level) and watch --guard (at the configured levels). Each run is shown with its kind while
// its process lives, and is gone when it ends.
TEST(TopCli, ShowsTheLevelsOfARunningSweepAndWatchGuard) {
  testing::TempDir dir("top-sweep");
  const fs::path journal = dir / "journal.db";
  GuardCleanup cleanup;
  const pid_t sweep = testing::StartCli(
      {"sweep", "--state", journal.string(), "--logs", (dir / "logs").string(), "--batch", "1",
       "--limit", "90%", "--min-available", "1GiB", "--require-available", "1GiB", "--max-trials",
       "1", "--", "sh", "-c", "exec sleep 60 # batch {batch}"});
  ASSERT_GT(sweep, 0);
  cleanup.guards.push_back(sweep);
  auto j = WaitForGuards(journal, 1);
  ASSERT_EQ(j["guards"].size(), 1u) << j.dump();
  EXPECT_EQ(j["guards"][0]["kind"], "sweep");
  EXPECT_EQ(j["guards"][0]["guard_pid"], sweep);
  EXPECT_EQ(j["guards"][0]["kill_below_bytes"], 1ULL << 30);
  EXPECT_EQ(j["guards"][0]["warn_below_bytes"], 0);
  const auto text = RunCli(
      {"top", "--once", "--journal", journal.string()}, 20000,
      {"HEADROOM_NVML_LIB=/nonexistent.so", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "COLUMNS=120"});
  EXPECT_TRUE(Contains(
      text.out, fmt::format("sweep run 1 pid {}: no warn level · kill level 1.00 GiB (K)", sweep)))
      << text.out;

  const pid_t watch = testing::StartCli(
      {"watch", "--journal", journal.string(), "--out", (dir / "samples.csv").string(),
       "--interval", "1s", "--guard", "--", "sleep", "60"},
      {"HEADROOM_KILL_LEVEL=1.5GiB", "HEADROOM_WARN_LEVEL=3GiB"});
  ASSERT_GT(watch, 0);
  cleanup.guards.push_back(watch);
  j = WaitForGuards(journal, 2);
  ASSERT_EQ(j["guards"].size(), 2u) << j.dump();
  EXPECT_EQ(j["guards"][0]["kind"], "watch");  // the newest run first
  EXPECT_EQ(j["guards"][0]["guard_pid"], watch);
  EXPECT_EQ(j["guards"][0]["kill_below_bytes"], 3ULL << 29);
  EXPECT_EQ(j["guards"][0]["warn_below_bytes"], 3ULL << 30);
  EXPECT_EQ(j["guards"][0]["command"], nlohmann::json({"sleep", "60"}));

  // Both end on SIGTERM (each stops its job): none is left.
  for (pid_t p : {sweep, watch}) {
    ASSERT_EQ(::kill(p, SIGTERM), 0);
    ::waitpid(p, nullptr, 0);
  }
  cleanup.guards.clear();
  j = WaitForGuards(journal, 0);
  EXPECT_EQ(j["guards"].size(), 0u) << j.dump();
}

}  // namespace
}  // namespace headroom
