// CLI tests of `headroom guard` with real child processes and signals. Memory safety (a
// 2-core, 24 GiB machine that other work shares): every kill level is set relative to the
// MemAvailable of the moment (never more than 1.5 GiB below it), every balloon is capped at
// 3 GiB and exits by itself at its --timeout, and every process a test starts is killed
// and checked dead before the test ends.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../tools/balloon_progress.h"
#include "guard/pidfd.h"
#include "run_cli.h"
#include "sys/meminfo.h"
#include "sys/processes.h"
#include "testing_files.h"
#include "testing_memory.h"
#include "testing_processes.h"

namespace headroom {
namespace {

using testing::Alive;
using testing::AvailableNow;
using testing::SettledAvailable;
using testing::Slurp;

using testing::TempDir;

using testing::RunCli;
namespace fs = std::filesystem;

const std::string kBalloon = HEADROOM_BALLOON;

// The balloon as a job, its stdout ("ready PID") kept out of the guard's JSON on stdout.
std::vector<std::string> Guarded(std::vector<std::string> guard_args,
                                 const std::vector<std::string>& balloon_args) {
  guard_args.insert(guard_args.begin(), "guard");
  for (const char* a : {"--", "sh", "-c", "exec \"$0\" \"$@\" >/dev/null"}) guard_args.push_back(a);
  guard_args.push_back(kBalloon);
  guard_args.insert(guard_args.end(), balloon_args.begin(), balloon_args.end());
  return guard_args;
}

// A kill level `below` bytes under the settled MemAvailable.
// A level as the flags take it: bytes with their unit (a bare number is refused).
std::string LevelBelowNow(uint64_t below) {
  return std::to_string(SettledAvailable() - below) + "B";
}

std::vector<pid_t> ReadPids(const std::string& pidfile) {
  std::vector<pid_t> pids;
  std::ifstream in(pidfile);
  pid_t p = 0;
  while (in >> p) pids.push_back(p);
  return pids;
}

// Kills whatever a balloon left behind (the cleanup every test runs, pass or fail).
struct PidfileReaper {
  std::string pidfile;
  ~PidfileReaper() {
    for (pid_t p : ReadPids(pidfile)) {
      if (Alive(p)) kill(p, SIGKILL);
    }
  }
};

// A v1 memory cgroup limited to 4 GiB that the guarded job joins, where one can be made: if
// the guard failed, the kernel's memcg OOM would kill the balloon, not the machine. The
// guard's own job cgroup (v2 here) is a separate hierarchy, so both hold at once.
class MemoryBackstop {
 public:
  MemoryBackstop() {
    auto mounts = SysRoot("/").ReadFile("proc/self/mounts");
    auto own = SysRoot("/").ReadFile("proc/self/cgroup");
    if (!mounts || !own) return;
    std::string mount, path;
    for (std::istringstream in(*mounts); std::getline(in, mount);) {
      if (mount.find(" cgroup ") != std::string::npos &&
          mount.find("memory") != std::string::npos) {
        mount = mount.substr(mount.find(' ') + 1);
        mount = mount.substr(0, mount.find(' '));
        break;
      }
      mount.clear();
    }
    for (std::istringstream in(*own); std::getline(in, path);) {
      const auto at = path.find(":memory:");
      if (at != std::string::npos) {
        path = path.substr(at + 8);
        break;
      }
      path.clear();
    }
    if (mount.empty()) return;
    dir_ = mount + (path == "/" ? "" : path) + "/headroom-test-" + std::to_string(getpid());
    if (mkdir(dir_.c_str(), 0755) != 0) {
      dir_.clear();
      return;
    }
    std::ofstream(dir_ + "/memory.limit_in_bytes") << (4ULL << 30);
  }
  ~MemoryBackstop() {
    if (!dir_.empty()) rmdir(dir_.c_str());
  }
  std::string procs() const { return dir_.empty() ? "" : dir_ + "/cgroup.procs"; }

 private:
  std::string dir_;
};

testing::CliResult RunGuarded(const std::vector<std::string>& args) {
  static MemoryBackstop backstop;
  return RunCli(args, 30000, {}, backstop.procs());
}

// Runs a test's guarded balloon, again (twice at most, the level taken afresh each time) when
// the run says the premise failed rather than the guard: no kill, and MemAvailable never
// came down to the kill level, because memory came back from elsewhere while the balloon
// grew (seen in CI, on a VM right after the build: 1.7 to 2.3 GB over a 20 s run). A run
// whose MemAvailable did reach the level without a kill is returned at once, and fails.
testing::CliResult RunUntilTheLevelIsReached(const std::function<testing::CliResult()>& run) {
  testing::CliResult r;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    r = run();
    const auto j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    if (r.status != 0 || !j.is_object() || j.value("killed_by_guard", true) ||
        !j["lowest_available_bytes"].is_number() || !j["kill_below_bytes"].is_number()) {
      return r;
    }
    const auto lowest = j["lowest_available_bytes"].get<uint64_t>();
    const auto level = j["kill_below_bytes"].get<uint64_t>();
    if (lowest <= level) return r;
    std::fprintf(stderr,
                 "note: attempt %d: MemAvailable never came down to the kill level (lowest %llu, "
                 "level %llu): memory came back from elsewhere; running it again\n",
                 attempt, static_cast<unsigned long long>(lowest),
                 static_cast<unsigned long long>(level));
  }
  return r;
}

nlohmann::json Json(const testing::CliResult& r) {
  try {
    return nlohmann::json::parse(r.out);
  } catch (...) {
    ADD_FAILURE() << "not JSON: " << r.out << r.err;
    return {};
  }
}

TEST(GuardCli, PassesTheJobsExitStatusThrough) {
  EXPECT_EQ(RunCli({"guard", "--min-available", "64M", "--", "sh", "-c", "exit 3"}).status, 3);
  EXPECT_EQ(RunCli({"guard", "--min-available", "64M", "--", "sh", "-c", "kill -TERM $$"}).status,
            143);
  const auto r =
      RunCli({"guard", "--json", "--min-available", "64M", "--", "sh", "-c", "sleep 0.2"});
  EXPECT_EQ(r.status, 0) << r.err;
  const auto j = Json(r);
  EXPECT_EQ(j["killed_by_guard"], false);
  EXPECT_EQ(j["job_exit_code"], 0);
  EXPECT_GT(j["polls"].get<int>(), 0);
}

// Issue 29: the job ran at the guard's own nice -10 (and the guard is the one that must stop
// it). It gets its caller's nice value back, and an oom_score_adj no lower than its caller's
// (800 unless the caller's was higher): here the caller runs at nice +3 with 900.
TEST(GuardCli, TheJobRunsAtItsCallersPriorityNotTheGuards) {
  errno = 0;
  const int own_nice = getpriority(PRIO_PROCESS, 0);
  ASSERT_EQ(errno, 0);
  const auto r = testing::RunProgram(
      {"sh", "-c",
       "echo 900 > /proc/self/oom_score_adj && exec nice -n 3 \"$0\" guard --min-available 64M "
       "-- sh -c 'cut -d\" \" -f19 /proc/$$/stat; cat /proc/$$/oom_score_adj'",
       HEADROOM_BINARY});
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream out(r.out);
  int nice = 0, adj = 0;
  ASSERT_TRUE(out >> nice >> adj) << r.out;
  EXPECT_EQ(nice, std::min(own_nice + 3, 19));
  EXPECT_EQ(adj, 900);
  // A caller at 0: the job's 800, not the guard's -500.
  const auto plain = RunCli({"guard", "--min-available", "64M", "--", "sh", "-c",
                             "cut -d' ' -f19 /proc/$$/stat; cat /proc/$$/oom_score_adj"});
  ASSERT_EQ(plain.status, 0) << plain.err;
  std::istringstream plain_out(plain.out);
  ASSERT_TRUE(plain_out >> nice >> adj) << plain.out;
  EXPECT_EQ(nice, own_nice);
  const auto own_adj = SysRoot("/").ReadFile("proc/self/oom_score_adj");
  ASSERT_TRUE(own_adj);
  EXPECT_EQ(adj, std::max(800, std::stoi(*own_adj)));
}

TEST(GuardCli, NoKillWithoutPressure) {
  TempDir dir;
  PidfileReaper reaper{dir.File("pids")};
  const auto r = RunGuarded(Guarded(
      {"--json", "--min-available", LevelBelowNow(2ULL << 30)},
      {"--cap", "256M", "--rate", "512M", "--hold", "0.3s", "--pidfile", dir.File("pids")}));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Json(r)["killed_by_guard"], false);
}

TEST(GuardCli, KillsAGrowingJobWithBoundedOvershoot) {
  TempDir dir;
  PidfileReaper reaper{dir.File("pids")};
  uint64_t level = 0;
  const auto r = RunUntilTheLevelIsReached([&] {
    level = SettledAvailable() - (1536ULL << 20);
    return RunGuarded(Guarded(
        {"--json", "--min-available", std::to_string(level) + "B", "--events",
         dir.File("events.jsonl")},
        // The cap is a backstop the guard should never let it reach.
        {"--cap", "4G", "--rate", "1G", "--timeout", "20s", "--pidfile", dir.File("pids")}));
  });
  ASSERT_EQ(r.status, 99) << r.out << r.err;
  const auto j = Json(r);
  EXPECT_EQ(j["killed_by_guard"], true);
  // Overshoot: at 1 GB/s and a 10 ms period near the level, a few tens of MiB past it at
  // most; 256 MiB leaves room for a loaded machine.
  EXPECT_GT(j["lowest_available_bytes"].get<uint64_t>() + (256ULL << 20), level);
  for (pid_t p : ReadPids(dir.File("pids"))) EXPECT_FALSE(Alive(p)) << p;
  // The events file holds start, trigger, a signal and exit, each a JSON line.
  std::ifstream in(dir.File("events.jsonl"));
  std::vector<std::string> types;
  for (std::string line; std::getline(in, line);) {
    const auto e = nlohmann::json::parse(line);
    EXPECT_TRUE(e.contains("wall_time") && e.contains("monotonic_s"));
    types.push_back(e["type"]);
  }
  for (const char* t : {"start", "trigger", "exit"}) {
    EXPECT_NE(std::find(types.begin(), types.end(), t), types.end()) << t;
  }
}

// The kill line (docs/guard.md "The kill line"): the reading against the level, the job's own
// peak (never the machine's pool use) and the next step, on the terminal and in the events.
TEST(GuardCli, TheKillLineStatesTheLevelTheJobsOwnPeakAndTheNextStep) {
  TempDir dir;
  testing::CliResult r;
  uint64_t level = 0;
  for (int attempt = 1; attempt <= 3 && r.status != 99; ++attempt) {
    PidfileReaper reaper{dir.File("pids")};
    fs::remove(dir.File("events.jsonl"));
    level = SettledAvailable() - (1536ULL << 20);
    r = RunGuarded(Guarded(
        {"--no-journal", "--min-available", std::to_string(level) + "B", "--events",
         dir.File("events.jsonl")},
        {"--cap", "4G", "--rate", "1G", "--timeout", "20s", "--pidfile", dir.File("pids")}));
    for (pid_t p : ReadPids(dir.File("pids"))) EXPECT_FALSE(Alive(p)) << p;
  }
  ASSERT_EQ(r.status, 99) << r.err;
  // The exit event's kill object: the facts the lines below are made of.
  nlohmann::json kill;
  std::ifstream in(dir.File("events.jsonl"));
  for (std::string line; std::getline(in, line);) {
    const auto e = nlohmann::json::parse(line);
    if (e["type"] == "exit") kill = e.value("kill", nlohmann::json());
  }
  ASSERT_TRUE(kill.is_object()) << Slurp(dir.File("events.jsonl"));
  EXPECT_EQ(kill["level_bytes"].get<uint64_t>(), level);
  const std::string why = kill["reason"];
  EXPECT_TRUE(why == "memavailable" || why == "projected") << why;
  const auto at = kill["available_bytes"].get<uint64_t>();
  if (why == "memavailable") {
    EXPECT_LT(at, level);
  } else {
    EXPECT_GT(kill["projected_s"].get<double>(), 0.0);
  }
  // The balloon touched about the 1.5 GiB above the level, far less than the machine's pool
  // use (every process's), which the old line called "peak pool use".
  const auto peak = kill["job_peak_bytes"].get<uint64_t>();
  const auto info = ReadMemInfo(SysRoot("/"));
  ASSERT_TRUE(info && info->total_bytes());
  EXPECT_GE(peak, 1ULL << 30) << kill.dump();
  EXPECT_LE(peak, 4ULL << 30) << kill.dump();
  EXPECT_LT(peak, *info->total_bytes() - level) << kill.dump();
  const std::string source = kill["job_peak_source"];
  EXPECT_TRUE(source == "cgroup" || source == "tree-rss") << source;
  EXPECT_EQ(kill["next_step"], "headroom ladder start balloon --symptom step --match balloon");

  auto gib = [](uint64_t b) {
    return fmt::format("{:.2f} GiB", static_cast<double>(b) / static_cast<double>(1ULL << 30));
  };
  const std::string reading =
      why == "memavailable" ? "MemAvailable " + gib(at) + " fell below the kill level " + gib(level)
                            : "MemAvailable " + gib(at) + ", falling ";
  EXPECT_NE(r.err.find("headroom guard: killed the job: " + reading), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the kill level " + gib(level) + " (" + why + "; SIG"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("\nheadroom guard: the job's own peak: " + gib(peak) + " (its "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("\nheadroom guard: next: headroom ladder start balloon --symptom step "
                       "--match balloon (the OOM ladder"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("; peak pool use"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("; the machine's peak pool use"), std::string::npos) << r.err;
}

TEST(GuardCli, KillsEveryDescendantIncludingEscapees) {
  TempDir dir;
  PidfileReaper reaper{dir.File("pids")};
  const auto r = RunUntilTheLevelIsReached([&] {
    return RunGuarded(
        Guarded({"--json", "--min-available", LevelBelowNow(1ULL << 30)},
                {"--cap", "2560M", "--rate", "1G", "--children", "3", "--setsid", "--double-fork",
                 "--timeout", "20s", "--pidfile", dir.File("pids")}));
  });
  ASSERT_EQ(r.status, 99) << r.out << r.err;
  const auto pids = ReadPids(dir.File("pids"));
  EXPECT_GE(pids.size(), 4u);
  for (pid_t p : pids) EXPECT_FALSE(Alive(p)) << p;
}

// What the balloon had touched when the guard's SIGTERM came, and at its end (its --progress
// record); nullopt without a record or a SIGTERM.
std::optional<std::pair<uint64_t, uint64_t>> BytesAtTermAndEnd(const std::string& path) {
  const std::string bytes = Slurp(path);
  balloon::ProgressHeader p{};
  if (bytes.size() < sizeof p) return std::nullopt;
  std::memcpy(&p, bytes.data(), sizeof p);
  if (p.version != balloon::kProgressVersion || p.t_term_ns == 0) return std::nullopt;
  return std::pair{p.bytes_term, p.bytes};
}

TEST(GuardCli, ASigtermIgnoringJobDiesBySigkillAfterTheGrace) {
  // The job stops growing at SIGTERM but does not exit (--stop-on-term): it keeps its grace. A
  // job that keeps filling the pool is killed at the level instead (the test below). So is
  // this one when something else on the machine fills the pool fast during its grace: the
  // guard cannot tell whose pages they are. A run where the guard saw that (an escalation
  // at the level, though the balloon touched at most its one chunk in flight after the
  // SIGTERM: 4 MiB, under the 16 MiB the guard needs to see) is run again, three runs at most;
  // the last is checked whatever happened (seen once on this VM: a kill at 217 ms).
  TempDir dir;
  for (int attempt = 1;; ++attempt) {
    const std::string pids = dir.File("pids-" + std::to_string(attempt));
    const std::string progress = dir.File("progress-" + std::to_string(attempt));
    PidfileReaper reaper{pids};
    const auto r = RunUntilTheLevelIsReached([&] {
      return RunGuarded(
          Guarded({"--json", "--grace", "500ms", "--min-available", LevelBelowNow(512ULL << 20)},
                  {"--cap", "3G", "--rate", "512M", "--stop-on-term", "--timeout", "20s",
                   "--pidfile", pids, "--progress", progress}));
    });
    ASSERT_EQ(r.status, 99) << r.out << r.err;
    const auto j = Json(r);
    const auto grown = BytesAtTermAndEnd(progress);
    if (attempt < 3 && j["signal_path"] == "SIGTERM, SIGKILL at the level" && grown &&
        grown->second - grown->first <= (4ULL << 20)) {
      std::fprintf(stderr,
                   "note: attempt %d: killed at the level during the grace, but the balloon "
                   "touched %llu bytes after SIGTERM: the pool was filled from elsewhere; "
                   "running it again\n",
                   attempt, static_cast<unsigned long long>(grown->second - grown->first));
      continue;
    }
    EXPECT_EQ(j["signal_path"], "SIGTERM, SIGKILL after grace") << r.out;
    EXPECT_GE(j["crossing_to_empty_ms"].get<double>(), 450);
    for (pid_t p : ReadPids(pids)) EXPECT_FALSE(Alive(p)) << p;
    break;
  }
}

// When the guard sent its SIGTERM, in CLOCK_MONOTONIC nanoseconds: the "term" line of its
// --events file. nullopt without one.
std::optional<uint64_t> TermSentNs(const std::string& events) {
  std::ifstream in(events);
  for (std::string line; std::getline(in, line);) {
    const auto e = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (e.is_object() && e.value("type", "") == "term" && e["monotonic_s"].is_number())
      return static_cast<uint64_t>(e["monotonic_s"].get<double>() * 1e9);
  }
  return std::nullopt;
}

// The balloon's own fill from `t_term_ns` on (its --progress log, on the same clock; a balloon
// that ignores SIGTERM does not see it): the bytes touched from then to its last chunk (the
// cap, or the chunk before the SIGKILL) and when that last chunk came. nullopt without a log.
struct FillAfterTerm {
  uint64_t t_term_ns = 0, t_end_ns = 0, bytes = 0;
  double Seconds() const { return static_cast<double>(t_end_ns - t_term_ns) / 1e9; }
  double BytesPerSecond() const {
    return Seconds() > 0 ? static_cast<double>(bytes) / Seconds() : 0;
  }
};

std::optional<FillAfterTerm> FillAfter(const std::string& progress, uint64_t t_term_ns) {
  const std::string bytes = Slurp(progress);
  balloon::ProgressHeader p{};
  if (bytes.size() < balloon::kProgressFileBytes) return std::nullopt;
  std::memcpy(&p, bytes.data(), sizeof p);
  if (p.version != balloon::kProgressVersion) return std::nullopt;
  uint64_t at_term = 0, at_end = 0;
  FillAfterTerm f{t_term_ns, t_term_ns, 0};
  const uint64_t entries = std::min<uint64_t>(p.log_count, balloon::kLogCapacity);
  for (uint64_t i = 0; i < entries; ++i) {
    balloon::LogEntry e{};
    std::memcpy(&e, bytes.data() + balloon::kLogOffset + i * sizeof e, sizeof e);
    if (e.t_ns == 0) continue;
    if (e.t_ns <= t_term_ns) at_term = std::max(at_term, e.bytes);
    if (e.t_ns > f.t_end_ns) {
      f.t_end_ns = e.t_ns;
      at_end = e.bytes;
    }
  }
  f.bytes = at_end > at_term ? at_end - at_term : 0;
  return f;
}

// MemAvailable and MemFree every 5 ms on CLOCK_MONOTONIC (the balloon's clock), from its
// construction to Stop(): what the machine showed while a job filled it, read by the test
// itself, so a run can tell its job's fill (the balloon's log) from the rest of the machine.
class MeminfoSampler {
 public:
  struct Sample {
    uint64_t t_ns = 0, available = 0, free = 0;
  };
  MeminfoSampler() : thread_([this] { Loop(); }) {}
  ~MeminfoSampler() { Stop(); }
  MeminfoSampler(const MeminfoSampler&) = delete;
  MeminfoSampler& operator=(const MeminfoSampler&) = delete;
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  // The first sample at or after `t_ns` (the last one when none is); nullopt with none.
  std::optional<Sample> At(uint64_t t_ns) const {
    for (const auto& s : samples_) {
      if (s.t_ns >= t_ns) return s;
    }
    if (samples_.empty()) return std::nullopt;
    return samples_.back();
  }
  uint64_t LowestAvailable() const {
    uint64_t low = UINT64_MAX;
    for (const auto& s : samples_) low = std::min(low, s.available);
    return low;
  }

 private:
  void Loop() {
    while (!stop_) {
      timespec ts{};
      clock_gettime(CLOCK_MONOTONIC, &ts);
      auto info = ReadMemInfo(SysRoot("/"));
      if (info && info->available_bytes() && info->free_bytes()) {
        samples_.push_back(
            {static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec),
             *info->available_bytes(), *info->free_bytes()});
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  std::atomic<bool> stop_{false};
  std::vector<Sample> samples_;  // the thread's until Stop() joins it
  std::thread thread_;
};

// How fast `field` of the machine's memory fell between two samples, in bytes per second.
double FellPerSecond(const MeminfoSampler::Sample& a, const MeminfoSampler::Sample& b,
                     uint64_t MeminfoSampler::Sample::*field) {
  if (b.t_ns <= a.t_ns) return 0;
  return (static_cast<double>(a.*field) - static_cast<double>(b.*field)) /
         (static_cast<double>(b.t_ns - a.t_ns) / 1e9);
}

TEST(GuardCli, ASigtermIgnoringJobThatKeepsFillingIsKilledAtTheLevel) {
  // Issue 16: at 1 GB/s a job that ignores SIGTERM ended 415-429 MiB below the level with a 1 s
  // grace. Now SIGKILL goes at the level, long before the 3 s grace ends.
  //
  // The rule acts on a job still filling the pool at 500 MB/s or more after the SIGTERM, as
  // MemAvailable shows it. This VM at times cannot fill that fast (0.1 GB/s seen while the
  // host backs fresh guest pages), and other processes give memory back during the grace,
  // which MemAvailable cannot tell from the job's fill. So each attempt reads what it can
  // trust: the job's own fill after the SIGTERM (the balloon's progress log) and the machine's
  // MemAvailable and MemFree over the same time (read here every 5 ms). Where both say the
  // pool kept filling fast (750 MB/s by the balloon's log, 600 MB/s in MemAvailable and in
  // MemFree), a kill after the grace is a failure; where they do not, the premise is absent:
  // the attempt checks what holds whatever the fill (a kill, the whole tree gone) and the run
  // is tried again, three attempts at most. A kill at the level is checked in full whenever it
  // comes; a last attempt without one ends the test on what that attempt asserted.
  TempDir dir;
  constexpr double kFastFill = 750e6, kFastFall = 600e6;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    const std::string pids = dir.File("pids-" + std::to_string(attempt));
    const std::string progress = dir.File("progress-" + std::to_string(attempt));
    const std::string events = dir.File("events-" + std::to_string(attempt) + ".jsonl");
    PidfileReaper reaper{pids};
    uint64_t level = 0;
    std::optional<MeminfoSampler> machine;
    const auto r = RunUntilTheLevelIsReached([&] {
      level = SettledAvailable() - (1ULL << 30);
      machine.reset();
      machine.emplace();
      auto run = RunGuarded(Guarded({"--json", "--grace", "3s", "--min-available",
                                     std::to_string(level) + "B", "--events", events},
                                    {"--cap", "2560M", "--rate", "1G", "--ignore-term", "--timeout",
                                     "20s", "--pidfile", pids, "--progress", progress}));
      machine->Stop();
      return run;
    });
    ASSERT_EQ(r.status, 99) << r.out << r.err;
    const auto j = Json(r);
    EXPECT_EQ(j["killed_by_guard"], true) << r.out;
    for (pid_t p : ReadPids(pids)) EXPECT_FALSE(Alive(p)) << p;
    if (j["signal_path"] == "SIGTERM, SIGKILL at the level") {
      EXPECT_LT(j["crossing_to_empty_ms"].get<double>(), 1500) << r.out;
      // Near the level the guard reads every few ms.
      ASSERT_TRUE(j["longest_gap_after_trigger_ms"].is_number()) << r.out;
      const double gap = j["longest_gap_after_trigger_ms"].get<double>();
      EXPECT_GT(gap, 0);
      // bench/guard_reaction.py measures it within 64 MiB; 160 MiB leaves room for a loaded
      // machine. What other processes took from the pool after the SIGTERM is not the job's
      // overshoot: MemAvailable's fall from the guard's trigger reading to its lowest, less the
      // job's own fill over that time (the balloon's log), is counted back (seen here: 219 MiB
      // past the level with the job's kill 2 ms after its crossing, while a build ran).
      const auto term = TermSentNs(events);
      ASSERT_TRUE(term) << "no SIGTERM in the guard's events: " << r.out;
      const auto fill = FillAfter(progress, *term);
      ASSERT_TRUE(fill) << "no progress record from the balloon: " << r.out;
      ASSERT_TRUE(j["trigger_available_bytes"].is_number()) << r.out;
      const uint64_t lowest = j["lowest_available_bytes"].get<uint64_t>();
      const uint64_t trigger = j["trigger_available_bytes"].get<uint64_t>();
      const uint64_t fell = trigger > lowest ? trigger - lowest : 0;
      const uint64_t others = fell > fill->bytes ? fell - fill->bytes : 0;
      // An overshoot past that in a run where the guard went unread for over 50 ms after its
      // trigger (it reads every few ms there) was the machine not running the guard, not the
      // guard (seen once in a fresh clone's run, 197 MiB past the level): such a run is run
      // again; the third is checked whatever happened.
      if (attempt < 3 && lowest + others + (160ULL << 20) <= level && gap > 50) {
        std::fprintf(stderr,
                     "note: attempt %d: %.0f MiB past the level with the guard unread for "
                     "%.0f ms; running it again\n",
                     attempt, static_cast<double>(level - lowest) / (1 << 20), gap);
        continue;
      }
      EXPECT_GT(lowest + others + (160ULL << 20), level)
          << "others took " << others / (1 << 20) << " MiB, the job filled "
          << fill->bytes / (1 << 20) << " MiB after the SIGTERM: " << r.out;
      return;
    }
    if (j["signal_path"] == "SIGKILL at once") {
      // A fall rate that would empty the pool within the grace (a burst of other processes'
      // memory read in one 10 ms period): no SIGTERM to ignore, so not this test's case; the
      // job still ended no later than the level.
      EXPECT_GT(j["lowest_available_bytes"].get<uint64_t>() + (160ULL << 20), level) << r.out;
      std::fprintf(stderr, "note: attempt %d: SIGKILL at once; running it again\n", attempt);
      continue;
    }
    // No kill at the level: the SIGTERM went first, and the job had to fill the pool fast, in
    // its own log and in the machine's readings, for that to be the guard's fault.
    const auto term = TermSentNs(events);
    ASSERT_TRUE(term) << "no SIGTERM in the guard's events: " << r.out;
    const auto fill = FillAfter(progress, *term);
    ASSERT_TRUE(fill) << "no progress record from the balloon: " << r.out;
    const auto at_term = machine->At(fill->t_term_ns), at_end = machine->At(fill->t_end_ns);
    ASSERT_TRUE(at_term && at_end);
    const double job = fill->BytesPerSecond();
    const double available = FellPerSecond(*at_term, *at_end, &MeminfoSampler::Sample::available);
    const double free = FellPerSecond(*at_term, *at_end, &MeminfoSampler::Sample::free);
    const bool reached = machine->LowestAvailable() <= level;
    EXPECT_FALSE(fill->Seconds() >= 0.1 && job >= kFastFill && available >= kFastFall &&
                 free >= kFastFall && reached)
        << "the job filled at " << job / 1e6 << " MB/s for " << fill->Seconds()
        << " s after the SIGTERM and MemAvailable fell at " << available / 1e6 << " MB/s (MemFree "
        << free / 1e6 << " MB/s) to the level, yet no kill at the level: " << r.out;
    std::fprintf(stderr,
                 "note: attempt %d: %s; after the SIGTERM the job filled at %.0f MB/s for %.2f s, "
                 "MemAvailable fell at %.0f MB/s, MemFree at %.0f MB/s: not the fast fill this "
                 "test needs%s\n",
                 attempt, j["signal_path"].dump().c_str(), job / 1e6, fill->Seconds(),
                 available / 1e6, free / 1e6, attempt < 3 ? "; running it again" : "");
  }
}

TEST(GuardCli, InvisibleMemoryStillTriggersTheKill) {
  // memfd pages that are never mapped: MemAvailable falls, no process's RSS grows (GPU
  // memory on GB10 behaves so).
  TempDir dir;
  PidfileReaper reaper{dir.File("pids")};
  const auto r = RunUntilTheLevelIsReached([&] {
    return RunGuarded(Guarded({"--json", "--min-available", LevelBelowNow(1ULL << 30)},
                              {"--mode", "memfd", "--cap", "2560M", "--rate", "1G", "--timeout",
                               "20s", "--pidfile", dir.File("pids")}));
  });
  ASSERT_EQ(r.status, 99) << r.out << r.err;
  const auto j = Json(r);
  EXPECT_LT(j["peak_tree_rss_bytes"].get<uint64_t>(), 256ULL << 20);
  for (pid_t p : ReadPids(dir.File("pids"))) EXPECT_FALSE(Alive(p)) << p;
}

TEST(GuardCli, ForwardsSignalsToTheJob) {
  // The guard gets SIGTERM; the job's trap turns it into exit 7, which the guard returns.
  // The signal is sent once the job says its trap is set (under ASan on a loaded machine
  // a fixed delay can end before the shell has run its first line).
  int out_pipe[2];
  ASSERT_EQ(pipe(out_pipe), 0);
  const pid_t guard = fork();
  if (guard == 0) {
    dup2(out_pipe[1], 2);
    execl(HEADROOM_BINARY, HEADROOM_BINARY, "guard", "--no-journal", "--min-available", "64M", "--",
          "sh", "-c", "trap 'exit 7' TERM; echo trap-set >&2; sleep 10 & wait",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_GT(guard, 0);
  close(out_pipe[1]);
  std::string seen;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (seen.find("trap-set") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    pollfd p{out_pipe[0], POLLIN, 0};
    if (poll(&p, 1, 100) == 1) {
      char buf[256];
      const ssize_t n = read(out_pipe[0], buf, sizeof buf);
      if (n <= 0) break;
      seen.append(buf, static_cast<size_t>(n));
    }
  }
  EXPECT_NE(seen.find("trap-set"), std::string::npos) << seen;
  kill(guard, SIGTERM);
  int status = 0;
  waitpid(guard, &status, 0);
  close(out_pipe[0]);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
}

TEST(GuardCli, AttachesToAnExistingProcess) {
  const pid_t child = fork();
  if (child == 0) {
    execl("/bin/sleep", "sleep", "20", static_cast<char*>(nullptr));
    _exit(127);
  }
  // A level above what is available: the guard kills at its first reading.
  const auto r = RunCli({"guard", "--json", "--pid", std::to_string(child), "--min-available",
                         std::to_string(testing::CrossedLevelBytes()) + "B"});
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_EQ(r.status, 99) << r.err;
  EXPECT_TRUE(WIFSIGNALED(status));
}

TEST(GuardCli, RequireAvailableRefusesAndListsLeftoversWithoutTouchingThem) {
  const pid_t fake = fork();
  if (fake == 0) {
    // A process whose command line says vllm.
    execl("/bin/sleep", "vllm", "20", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto r = RunCli({"guard", "--require-available", "1T", "--", "true"});
  EXPECT_EQ(r.status, 3);
  EXPECT_NE(r.err.find("refusing to start"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(std::to_string(fake)), std::string::npos) << r.err;
  EXPECT_TRUE(Alive(fake));
  kill(fake, SIGKILL);
  waitpid(fake, nullptr, 0);
}

TEST(GuardCli, UsageErrors) {
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const std::vector<Case> cases = {
      {{"guard"}, "give a command after --"},
      {{"guard", "--pid", "1", "--", "true"}, "one of them"},
      {{"guard", "--min-available", "0", "--", "true"}, "--min-available: '0' is zero"},
      {{"guard", "--min-available", "150%", "--", "true"}, "--min-available"},
      {{"guard", "--grace", "soon", "--", "true"}, "--grace"},
      {{"guard", "--pid", "abc"}, "--pid"},
      {{"guard", "--pid", "4000000"}, "--pid"},
      {{"guard", "--", "/nonexistent/headroom-job"}, "cannot run /nonexistent/headroom-job"},
      {{"guard", "--events", "/nonexistent/dir/e.jsonl", "--", "true"}, "--events"},
  };
  for (const auto& c : cases) {
    const auto r = RunCli(c.args);
    EXPECT_EQ(r.status, 2) << c.err << r.err;
    EXPECT_NE(r.err.find(c.err), std::string::npos) << r.err;
  }
}

TEST(Pidfd, AVerifiedPidfdRefusesARecycledPid) {
  const pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  const SysRoot root("/");
  const auto stat = ReadProcStat(root, child);
  ASSERT_TRUE(stat);
  // A different start time is a different process that happens to hold the PID.
  EXPECT_FALSE(OpenVerifiedPidfd(root, child, stat->starttime_ticks + 1));
  auto fd = OpenVerifiedPidfd(root, child, stat->starttime_ticks);
  ASSERT_TRUE(fd);
  EXPECT_EQ(PidfdSendSignal(*fd, SIGKILL), 0);
  waitpid(child, nullptr, 0);
  close(*fd);
  EXPECT_FALSE(OpenVerifiedPidfd(root, child, stat->starttime_ticks));
}

}  // namespace
}  // namespace headroom

namespace headroom {
namespace {

using testing::TempDir;

// --torch-cap with a stand-in torch module (the real one is not installed here): the hook
// must call set_per_process_memory_fraction with (MemAvailable - level) / total once torch
// is imported, and run the job's own sitecustomize first.
TEST(GuardTorchCap, SetsTheFractionAndChainsTheJobsSitecustomize) {
  TempDir dir;
  const fs::path fake = dir.File("site");
  fs::create_directories(fake / "torch");
  std::ofstream(fake / "torch" / "__init__.py") << R"PY(
import os
class _Props:
    total_memory = 100 * 2**30
class cuda:
    @staticmethod
    def is_available(): return True
    @staticmethod
    def device_count(): return 1
    @staticmethod
    def get_device_properties(d): return _Props()
    @staticmethod
    def set_per_process_memory_fraction(f, d):
        with open(os.environ["FRACTION_OUT"], "w") as out: out.write("%r %d" % (f, d))
)PY";
  std::ofstream(fake / "sitecustomize.py")
      << "import os\nopen(os.environ['CHAIN_OUT'], 'w').write('chained')\n";
  const uint64_t level = AvailableNow() / 2;
  const auto r = RunCli({"guard", "--torch-cap", "--min-available", std::to_string(level) + "B",
                         "--", "python3", "-c", "import torch"},
                        20000,
                        {"PYTHONPATH=" + fake.string(), "FRACTION_OUT=" + dir.File("fraction"),
                         "CHAIN_OUT=" + dir.File("chain")});
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream chain(dir.File("chain"));
  std::string chained;
  chain >> chained;
  EXPECT_EQ(chained, "chained");
  std::ifstream in(dir.File("fraction"));
  double fraction = 0;
  int device = -1;
  in >> fraction >> device;
  EXPECT_EQ(device, 0);
  // About (available - level) / 100 GiB; available moves a little between the two reads.
  const double expected = static_cast<double>(AvailableNow() - level) / (100.0 * (1ULL << 30));
  EXPECT_NEAR(fraction, expected, 0.02) << r.err;
  EXPECT_NE(r.err.find("headroom: torch memory fraction"), std::string::npos) << r.err;
}

TEST(GuardTorchCap, WithoutTorchTheJobRunsUntouched) {
  const auto r = RunCli({"guard", "--torch-cap", "--min-available", "64M", "--", "python3", "-c",
                         "import json; print('ok')"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("ok"), std::string::npos);
  EXPECT_EQ(r.err.find("not applied"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace headroom

namespace headroom {
namespace {

using testing::TempDir;

TEST(GuardJournal, RecordsTheRunForHistory) {
  TempDir dir;
  const std::string journal = dir.File("journal.db");
  const auto r =
      RunCli({"guard", "--journal", journal, "--min-available", "64M", "--", "sh", "-c", "exit 3"});
  ASSERT_EQ(r.status, 3) << r.err;
  const auto h = RunCli({"history", "--journal", journal, "--json"});
  ASSERT_EQ(h.status, 0) << h.err;
  const auto j = nlohmann::json::parse(h.out);
  ASSERT_EQ(j["runs"].size(), 1u) << h.out;
  const auto& run = j["runs"][0];
  EXPECT_EQ(run["kind"], "guard");
  EXPECT_EQ(run["exit_status"], 3);
  EXPECT_EQ(run["status"], "exited");
  EXPECT_EQ(run["summary"]["job_exit_code"], 3);
  // A journal that cannot be opened is a note; the job still runs and its status comes back.
  std::ofstream(dir.File("plain-file")) << "x";  // a file where a directory should be
  const auto bad = RunCli({"guard", "--journal", dir.File("plain-file") + "/j.db",
                           "--min-available", "64M", "--", "sh", "-c", "exit 4"});
  EXPECT_EQ(bad.status, 4);
  EXPECT_NE(bad.err.find("not recorded in the journal"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace headroom
