// Checks tests/tools/balloon, the memory balloon that the guard's tests and benchmark drive
// (docs/guard-benchmark.md, "Method"). Each test runs the real program with a small,
// harmless cap (256 MiB, or 64 MiB where only the process tree matters, since page faults on
// the 2-core test VM ran at 0.2-0.5 GB/s under load; timeouts of a few seconds) through a
// BalloonRun whose destructor SIGKILLs everything it started, escapees included, even when an
// assertion fails. Figures read from the live system (MemAvailable) carry tolerances: other
// processes run here.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/bytes.h"
#include "sys/meminfo.h"
#include "tools/balloon_progress.h"

namespace headroom {
namespace {

constexpr uint64_t kCapBytes = 256 * kMiB;  // matches the "256M" passed below

using balloon::LogEntry, balloon::kLogOffset;
using Progress = balloon::ProgressHeader;

uint64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Polls `done` every 5 ms until it holds (true) or `timeout_ms` passes (false).
bool WaitUntil(const std::function<bool()>& done, int timeout_ms) {
  const uint64_t end = NowNs() + static_cast<uint64_t>(timeout_ms) * 1'000'000ULL;
  while (!done()) {
    if (NowNs() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// The fields of /proc/PID/stat after the command name (which may hold spaces and ')').
struct PidStat {
  char state = '?';
  pid_t ppid = 0, pgrp = 0, session = 0;
};
std::optional<PidStat> ReadPidStat(pid_t pid) {
  const std::string text = ReadText("/proc/" + std::to_string(pid) + "/stat");
  const size_t name_end = text.rfind(')');
  if (name_end == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(name_end + 1));
  PidStat st;
  fields >> st.state >> st.ppid >> st.pgrp >> st.session;
  if (!fields) return std::nullopt;
  return st;
}

// A zombie counts as dead: its memory is gone, and an escapee reparented to an init that
// does not reap stays one.
bool Alive(pid_t pid) {
  const std::optional<PidStat> st = ReadPidStat(pid);
  return st && st->state != 'Z' && st->state != 'X';
}

// /proc/PID/status has meminfo's "Key:  value kB" shape, so the meminfo parser reads it
// (lines like "Name: balloon" are skipped as malformed). Bytes, nullopt when absent.
std::optional<uint64_t> StatusBytes(pid_t pid, std::string_view key) {
  return ParseMemInfo(ReadText("/proc/" + std::to_string(pid) + "/status")).Get(key);
}

uint64_t SystemBytes(std::string_view key) {
  return ParseMemInfo(ReadText("/proc/meminfo")).Get(key).value_or(0);
}

// Free pages parked on the per-CPU lists (the "count:" lines of /proc/zoneinfo), in bytes.
// MemFree, hence MemAvailable, leaves them out, and an allocation takes from them first: on
// this 2-CPU VM (kernel 6.18, pcp auto-tuning, high_max 77824 pages = 304 MiB per CPU) a
// 256 MiB memfd lowered MemAvailable by anything from 15 to 228 MiB while MemAvailable plus
// these pages fell by 257-270 MiB every time. So the drop is measured on the sum.
uint64_t PerCpuFreeBytes() {
  std::istringstream lines(ReadText("/proc/zoneinfo"));
  uint64_t pages = 0;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string key;
    uint64_t count = 0;
    if (fields >> key >> count && key == "count:") pages += count;
  }
  return pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// One balloon started with a private --progress and --pidfile; stdout and stderr go to
// files beside them. Not copyable: it owns processes.
class BalloonRun {
 public:
  explicit BalloonRun(std::vector<std::string> args) {
    std::string dir_template = std::filesystem::temp_directory_path() / "balloon_test.XXXXXX";
    if (mkdtemp(dir_template.data()) == nullptr) return;
    dir_ = dir_template;
    std::vector<std::string> argv = {HEADROOM_BALLOON, "--progress", dir_ + "/progress",
                                     "--pidfile", dir_ + "/pids"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    const std::string out = dir_ + "/stdout", err = dir_ + "/stderr";
    pid_ = fork();
    if (pid_ == 0) {
      // Plain descriptors, not freopen: that would flush a copy of this test's stdout buffer.
      const int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (out_fd < 0 || err_fd < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) _exit(127);
      execv(cargv[0], cargv.data());
      _exit(127);
    }
  }
  ~BalloonRun() {
    KillAll();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  BalloonRun(const BalloonRun&) = delete;
  BalloonRun& operator=(const BalloonRun&) = delete;

  pid_t pid() const { return pid_; }
  std::string Stdout() const { return ReadText(dir_ + "/stdout"); }
  std::string Stderr() const { return ReadText(dir_ + "/stderr"); }

  // The header, once the balloon has set it up (version 1); nullopt before.
  std::optional<Progress> ReadProgress() const {
    const std::string bytes = ReadText(dir_ + "/progress");
    Progress p{};
    if (bytes.size() < sizeof p) return std::nullopt;
    std::memcpy(&p, bytes.data(), sizeof p);
    if (p.version != balloon::kProgressVersion) return std::nullopt;
    return p;
  }
  std::vector<LogEntry> ReadLog() const {
    const std::string bytes = ReadText(dir_ + "/progress");
    const std::optional<Progress> p = ReadProgress();
    std::vector<LogEntry> log(p ? std::min(p->log_count, p->log_capacity) : 0);
    if (bytes.size() >= kLogOffset + log.size() * sizeof(LogEntry)) {
      std::memcpy(log.data(), bytes.data() + kLogOffset, log.size() * sizeof(LogEntry));
    }
    return log;
  }
  std::vector<pid_t> Pids() const {
    std::istringstream lines(ReadText(dir_ + "/pids"));
    std::vector<pid_t> pids;
    for (pid_t p; lines >> p;) pids.push_back(p);
    return pids;
  }

  bool WaitForCap(int timeout_ms = 2500) const {
    return WaitUntil([&] { return ReadProgress().value_or(Progress{}).t_cap_ns != 0; }, timeout_ms);
  }
  // The direct child's exit status (128 + signal when killed), or nullopt while it runs on
  // past `timeout_ms`.
  std::optional<int> Wait(int timeout_ms) {
    if (reaped_) return status_;
    const bool ended = WaitUntil(
        [&] {
          int wstatus = 0;
          if (waitpid(pid_, &wstatus, WNOHANG) != pid_) return false;
          status_ = WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus) : WEXITSTATUS(wstatus);
          return reaped_ = true;
        },
        timeout_ms);
    return ended ? std::optional<int>(status_) : std::nullopt;
  }

  // SIGKILLs every listed pid that is still a balloon (a pid checked by its command line,
  // so a recycled pid is never hit), then the direct child, and reaps it.
  void KillAll() {
    for (pid_t p : Pids()) {
      const std::string cmdline = ReadText("/proc/" + std::to_string(p) + "/cmdline");
      if (p != pid_ && cmdline.c_str() == std::string(HEADROOM_BALLOON)) kill(p, SIGKILL);
    }
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      reaped_ = true;
    }
  }

 private:
  std::string dir_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = -1;
};

TEST(BalloonCli, HelpAndUsageErrors) {
  {
    BalloonRun help({"--help"});
    EXPECT_EQ(help.Wait(2000), 0);
    EXPECT_NE(help.Stdout().find("usage: balloon --cap SIZE"), std::string::npos);
  }
  const std::vector<std::vector<std::string>> bad = {
      {},                                     // --cap is required
      {"--cap"},                              // needs a value
      {"--cap", "9G"},                        // above 8G without --allow-large
      {"--cap", "2T", "--allow-large"},       // absurd even then
      {"--cap", "0"},                         //
      {"--cap", "256M", "--rate", "fast"},    //
      {"--cap", "256M", "--mode", "gpu"},     //
      {"--cap", "256M", "--timeout", "0"},    //
      {"--cap", "256M", "--timeout", "2h"},   // lifetime is bounded
      {"--cap", "256M", "--children", "65"},  //
      {"--cap", "256M", "--setsid"},          // needs --children
      {"--cap", "256M", "--oom-score-adj", "1001"},
      {"--cap", "256M", "--ignore-term=yes"},  // a switch takes no value
      {"--cap", "256M", "--bogus"}};
  for (const auto& args : bad) {
    BalloonRun run(args);
    const std::string shown = args.empty() ? "(none)" : args.back();
    EXPECT_EQ(run.Wait(2000), 2) << shown;
    const std::string err = run.Stderr();
    EXPECT_EQ(err.rfind("balloon: ", 0), 0u) << shown << ": " << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << shown << ": " << err;
  }
}

TEST(Balloon, ReachesCapAtTheSetRateAndLogsEachChunk) {
  BalloonRun run({"--cap", "256M", "--rate", "512M/s", "--hold", "0", "--timeout", "5"});
  ASSERT_EQ(run.Wait(3000), 0) << run.Stderr();
  EXPECT_EQ(run.Stdout(), "ready " + std::to_string(run.pid()) + "\n");
  const std::optional<Progress> p = run.ReadProgress();
  ASSERT_TRUE(p);
  EXPECT_EQ(std::string(p->magic), "BALLOON");
  EXPECT_EQ(p->cap_bytes, kCapBytes);
  EXPECT_EQ(p->bytes, kCapBytes);
  EXPECT_EQ(p->workers, 1u);
  ASSERT_GT(p->t_cap_ns, p->t_start_ns);
  // 64 chunks of 4 MiB, the first at once: 63 / 128 s = 0.49 s at 512 MiB/s. Slower is
  // allowed (page faults ran at 0.33 GB/s on a cold VM); much faster means no pacing.
  const double seconds = static_cast<double>(p->t_cap_ns - p->t_start_ns) / 1e9;
  EXPECT_GT(seconds, 0.4);
  EXPECT_LT(seconds, 2.5);
  EXPECT_EQ(p->t_term_ns, 0u);
  const std::vector<LogEntry> log = run.ReadLog();
  ASSERT_EQ(log.size(), 64u);
  for (size_t i = 0; i < log.size(); ++i) {
    EXPECT_EQ(log[i].bytes, (i + 1) * 4 * kMiB) << i;
    if (i > 0) {
      EXPECT_GE(log[i].t_ns, log[i - 1].t_ns) << i;
    }
  }
  EXPECT_EQ(log.back().t_ns, p->t_cap_ns);
}

// Touches 256 MiB in `mode` and checks that the balloon's own RssAnon holds all of it.
void ExpectRssHoldsTheCap(const char* mode) {
  BalloonRun run({"--cap", "256M", "--mode", mode, "--timeout", "3"});
  ASSERT_TRUE(run.WaitForCap()) << mode << ": " << run.Stderr();
  EXPECT_GE(StatusBytes(run.pid(), "RssAnon").value_or(0), kCapBytes) << mode;
  // Huge pages depend on the THP setting and on fragmentation: reported, not asserted.
  const std::string rollup = ReadText("/proc/" + std::to_string(run.pid()) + "/smaps_rollup");
  const uint64_t huge_bytes = ParseMemInfo(rollup).Get("AnonHugePages").value_or(0);
  std::printf("balloon %s: AnonHugePages %llu MiB\n", mode,
              static_cast<unsigned long long>(huge_bytes / kMiB));
}

TEST(Balloon, AnonModeRaisesRss) { ExpectRssHoldsTheCap("anon"); }

TEST(Balloon, ThpModeRaisesRss) { ExpectRssHoldsTheCap("thp"); }

TEST(Balloon, MemfdLowersMemAvailableButNotRss) {
  // MemAvailable (plus the per-CPU free pages, see PerCpuFreeBytes) moves with everything
  // else on the machine, so up to three tries; Shmem and the balloon's own RSS are steady
  // enough to assert every time.
  bool dropped = false;
  for (int attempt = 0; attempt < 3 && !dropped; ++attempt) {
    const uint64_t available_before = SystemBytes("MemAvailable") + PerCpuFreeBytes();
    const uint64_t shmem_before = SystemBytes("Shmem");
    BalloonRun run({"--cap", "256M", "--mode", "memfd", "--timeout", "3"});
    ASSERT_TRUE(run.WaitForCap()) << run.Stderr();
    const uint64_t available_after = SystemBytes("MemAvailable") + PerCpuFreeBytes();
    EXPECT_GE(SystemBytes("Shmem"), shmem_before + kCapBytes * 9 / 10);
    EXPECT_LT(StatusBytes(run.pid(), "VmRSS").value_or(kCapBytes), 32 * kMiB);
    EXPECT_LT(StatusBytes(run.pid(), "RssAnon").value_or(kCapBytes), 16 * kMiB);
    dropped = available_after + kCapBytes * 6 / 10 <= available_before;
    std::printf(
        "balloon memfd: MemAvailable + per-CPU free fell by %lld MiB (try %d)\n",
        (static_cast<long long>(available_before) - static_cast<long long>(available_after)) /
            static_cast<long long>(kMiB),
        attempt + 1);
    // The pages belong to the fd alone: killing the process frees them.
    run.KillAll();
    EXPECT_TRUE(
        WaitUntil([&] { return SystemBytes("Shmem") < shmem_before + kCapBytes / 2; }, 1000));
  }
  EXPECT_TRUE(dropped) << "MemAvailable did not fall by 60 % of the cap in three tries";
}

TEST(Balloon, ChildrenShareTheCapAndDieWithTheParent) {
  BalloonRun run({"--cap", "256M", "--rate", "512M", "--children", "3", "--timeout", "5"});
  ASSERT_TRUE(run.WaitForCap()) << run.Stderr();
  const std::vector<pid_t> pids = run.Pids();
  ASSERT_EQ(pids.size(), 4u);
  EXPECT_EQ(pids[0], run.pid());
  EXPECT_EQ(run.ReadProgress()->workers, 3u);
  EXPECT_LT(StatusBytes(run.pid(), "RssAnon").value_or(kCapBytes), 16 * kMiB);
  uint64_t children_rss = 0;
  for (size_t i = 1; i < pids.size(); ++i) {
    ASSERT_TRUE(Alive(pids[i])) << pids[i];
    EXPECT_EQ(ReadPidStat(pids[i])->ppid, run.pid());
    EXPECT_EQ(ReadPidStat(pids[i])->pgrp, ReadPidStat(run.pid())->pgrp);
    children_rss += StatusBytes(pids[i], "RssAnon").value_or(0);
  }
  EXPECT_GE(children_rss, kCapBytes - 3 * 4096);  // each share is rounded down to a page
  // Plain children carry PR_SET_PDEATHSIG: killing the parent alone ends them.
  kill(run.pid(), SIGKILL);
  EXPECT_EQ(run.Wait(1000), 128 + SIGKILL);
  EXPECT_TRUE(
      WaitUntil([&] { return !Alive(pids[1]) && !Alive(pids[2]) && !Alive(pids[3]); }, 1000));
}

TEST(Balloon, SetsidChildrenLeaveTheSessionAndOutliveTheParent) {
  BalloonRun run({"--cap", "64M", "--children", "2", "--setsid", "--timeout", "5"});
  ASSERT_TRUE(run.WaitForCap()) << run.Stderr();
  const std::vector<pid_t> pids = run.Pids();
  ASSERT_EQ(pids.size(), 3u);
  const pid_t parent_session = ReadPidStat(run.pid())->session;
  for (size_t i = 1; i < pids.size(); ++i) {
    const std::optional<PidStat> st = ReadPidStat(pids[i]);
    ASSERT_TRUE(st) << pids[i];
    EXPECT_EQ(st->session, pids[i]);
    EXPECT_NE(st->session, parent_session);
    EXPECT_EQ(st->pgrp, pids[i]);
  }
  kill(run.pid(), SIGKILL);
  EXPECT_EQ(run.Wait(1000), 128 + SIGKILL);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_TRUE(Alive(pids[1]) && Alive(pids[2])) << "escapees must stay until killed";
}

TEST(Balloon, DoubleForkedWorkersAreReparented) {
  BalloonRun run({"--cap", "64M", "--children", "2", "--double-fork", "--timeout", "5"});
  ASSERT_TRUE(run.WaitForCap()) << run.Stderr();
  const std::vector<pid_t> pids = run.Pids();
  ASSERT_EQ(pids.size(), 3u);  // the parent and two grandchildren; intermediates are gone
  for (size_t i = 1; i < pids.size(); ++i) {
    const std::optional<PidStat> st = ReadPidStat(pids[i]);
    ASSERT_TRUE(st && Alive(pids[i])) << pids[i];
    EXPECT_NE(st->ppid, run.pid());
    EXPECT_EQ(st->pgrp, ReadPidStat(run.pid())->pgrp);  // no --setsid: same group
  }
}

TEST(Balloon, SigtermIsTimedAndExits143) {
  BalloonRun run({"--cap", "256M", "--rate", "512M", "--timeout", "5"});
  ASSERT_TRUE(
      WaitUntil([&] { return run.ReadProgress().value_or(Progress{}).bytes >= 64 * kMiB; }, 2000));
  const uint64_t sent_ns = NowNs();
  kill(run.pid(), SIGTERM);
  ASSERT_EQ(run.Wait(1000), 128 + SIGTERM);
  const std::optional<Progress> p = run.ReadProgress();
  ASSERT_TRUE(p);
  EXPECT_GE(p->t_term_ns, sent_ns);
  EXPECT_LT(p->t_term_ns - sent_ns, 500'000'000u);  // generous: 2 shared cores
  EXPECT_GE(p->bytes_term, 64 * kMiB);
  EXPECT_LE(p->bytes_term, kCapBytes);
  EXPECT_EQ(p->bytes_term, p->bytes);  // no chunk lands after the handler
}

TEST(Balloon, IgnoreTermSurvivesSigtermButNotSigkill) {
  BalloonRun run({"--cap", "64M", "--ignore-term", "--timeout", "5"});
  ASSERT_TRUE(run.WaitForCap()) << run.Stderr();
  kill(run.pid(), SIGTERM);
  EXPECT_EQ(run.Wait(300), std::nullopt);
  EXPECT_EQ(run.ReadProgress()->t_term_ns, 0u);
  kill(run.pid(), SIGKILL);
  EXPECT_EQ(run.Wait(1000), 128 + SIGKILL);
}

TEST(Balloon, TimeoutEndsTheWholeTreeByItself) {
  // Reaching the cap does not matter here, and page faults on this VM can be slow enough
  // (0.25 GB/s seen under load) that 256 MiB would not fit in the second: wait for "ready".
  BalloonRun run(
      {"--cap", "64M", "--children", "2", "--setsid", "--double-fork", "--timeout", "1"});
  ASSERT_TRUE(WaitUntil([&] { return run.Stdout().starts_with("ready "); }, 1000));
  const std::vector<pid_t> pids = run.Pids();
  ASSERT_EQ(pids.size(), 3u);
  EXPECT_EQ(run.Wait(2000), 0);
  EXPECT_TRUE(WaitUntil([&] { return !Alive(pids[1]) && !Alive(pids[2]); }, 1000));
}

}  // namespace
}  // namespace headroom
