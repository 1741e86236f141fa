// `headroom watch` end to end: the real binary, the fake libnvidia-ml (gb10 scenario) and a
// short shell job that writes '\n' and '\r' lines. Every process started here is waited for.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "run_cli.h"
#include "samples/samples_csv.h"
#include "sys/meminfo.h"
#include "testing_files.h"

namespace headroom {
namespace {

namespace fs = std::filesystem;
using testing::RunCli;
using testing::Slurp;

class WatchCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("headroom-watch-{}-{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(WatchCli, Gb10CommandRowsEventsLogAndExitStatus) {
  std::ofstream(dir_ / "nvml.txt") << "scenario gb10\ndegrade_after 3\n";
  const std::string job =
      "printf 'start\\n'; printf '\\r 10%%|#|\\r 20%%|##|'; sleep 1.2; printf '\\r 30%%|###|\\n';"
      " echo oops >&2; exit 7";
  const auto r =
      RunCli({"watch", "--no-journal", "--interval", "100ms", "--out", (dir_ / "s.csv").string(),
              "--events", (dir_ / "e.jsonl").string(), "--log", (dir_ / "job.log").string(),
              "--nvml-lib", HEADROOM_FAKE_NVML_PATH, "--", "sh", "-c", job},
             10000, {"HEADROOM_FAKE_NVML_SCRIPT=" + (dir_ / "nvml.txt").string()});
  ASSERT_FALSE(r.timed_out);
  EXPECT_EQ(r.status, 7) << r.err;
  // Pass-through keeps the original bytes, '\r' included.
  EXPECT_NE(r.out.find("start\n\r 10%|#|\r 20%|##|"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("oops\n"), std::string::npos);

  const std::string csv = Slurp(dir_ / "s.csv");
  EXPECT_TRUE(csv.starts_with("# headroom samples schema_version=1 host="));
  EXPECT_NE(csv.find("device=\"NVIDIA GB10\" platform=gb10 interval_ms=100"), std::string::npos);
  EXPECT_NE(csv.find("\ntimestamp,temperature.gpu,power.draw,"), std::string::npos);
  EXPECT_EQ(csv.back(), '\n');
  auto series = ReadSamplesCsv(dir_ / "s.csv");
  ASSERT_TRUE(series.ok()) << EnglishText(series.error().what);
  EXPECT_EQ(series->columns[0], "timestamp");
  EXPECT_EQ(series->columns[1], "temperature.gpu");
  EXPECT_EQ(series->columns[2], "power.draw");
  // ~1.2 s at 100 ms; loose bounds for a loaded machine.
  ASSERT_GE(series->samples.size(), 5u);
  EXPECT_LE(series->samples.size(), 30u);
  const auto& first = series->samples.front();
  const auto& last = series->samples.back();
  ASSERT_TRUE(first.temperature_c && last.temperature_c);
  EXPECT_GT(*last.temperature_c, *first.temperature_c);
  EXPECT_FALSE(first.gpu_memory_total_bytes.has_value());  // GB10: NVML has no memory
  const auto meminfo = ReadMemInfo(SysRoot("/"));
  ASSERT_TRUE(meminfo.ok());
  EXPECT_EQ(first.mem_total_bytes, meminfo->total_bytes());
  EXPECT_TRUE(first.mem_available_bytes.has_value());
  for (size_t i = 1; i < series->samples.size(); ++i) {
    EXPECT_GT(series->samples[i].time, series->samples[i - 1].time);
  }

  // Events: the degraded clock with no reason bit, on stderr and in the file.
  EXPECT_NE(r.err.find("clock_collapse"), std::string::npos) << r.err;
  const std::string events = Slurp(dir_ / "e.jsonl");
  EXPECT_NE(events.find("{\"type\":\"clock_collapse\",\"wall_time\":\""), std::string::npos)
      << events;
  EXPECT_NE(events.find("\"type\":\"power_plateau\""), std::string::npos) << events;

  // The log: one stamped line per segment, split at '\r' too.
  const std::string log = Slurp(dir_ / "job.log");
  const std::regex stamp(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z )");
  std::istringstream lines(log);
  std::vector<std::string> bodies;
  for (std::string line; std::getline(lines, line);) {
    EXPECT_TRUE(std::regex_search(line, stamp)) << line;
    bodies.push_back(line.size() > 25 ? line.substr(25) : "");
  }
  EXPECT_NE(std::find(bodies.begin(), bodies.end(), "start"), bodies.end()) << log;
  EXPECT_NE(std::find(bodies.begin(), bodies.end(), " 10%|#|"), bodies.end()) << log;
  EXPECT_NE(std::find(bodies.begin(), bodies.end(), " 20%|##|"), bodies.end()) << log;
  EXPECT_NE(std::find(bodies.begin(), bodies.end(), " 30%|###|"), bodies.end()) << log;
  EXPECT_NE(std::find(bodies.begin(), bodies.end(), "oops"), bodies.end()) << log;
  EXPECT_EQ(log.find('\r'), std::string::npos);
}

TEST_F(WatchCli, WithoutNvmlUntilSigtermEndsCleanly) {
  const fs::path out = dir_ / "s.csv";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int fd = ::open((dir_ / "err.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) ::dup2(fd, 2);
    ::execl(HEADROOM_BINARY, HEADROOM_BINARY, "watch", "--no-journal", "--interval", "100ms",
            "--out", out.c_str(), "--nvml-lib", "/nonexistent/libnvidia-ml.so.1", nullptr);
    _exit(127);
  }
  // Until three rows are written (bounded at 10 s), not a fixed time: under ASan on a busy
  // machine 700 ms once held only two.
  for (int i = 0; i < 100; ++i) {
    const std::string text = Slurp(out);
    const size_t header = text.find("\ntimestamp,");
    if (header != std::string::npos && std::count(text.begin() + header + 1, text.end(), '\n') >= 4)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_GT(pid, 0);
  ::kill(pid, SIGTERM);
  int status = 0;
  bool exited = false;
  for (int i = 0; i < 50 && !exited; ++i) {
    exited = ::waitpid(pid, &status, WNOHANG) == pid;
    if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!exited) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  ASSERT_TRUE(exited);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  const std::string err = Slurp(dir_ / "err.txt");
  EXPECT_NE(err.find("headroom: nvml: dlopen(/nonexistent/libnvidia-ml.so.1)"), std::string::npos)
      << err;
  EXPECT_NE(err.find("headroom watch: stopped by signal 15"), std::string::npos) << err;

  const std::string csv = Slurp(out);
  ASSERT_FALSE(csv.empty());
  EXPECT_EQ(csv.back(), '\n');  // a complete last line
  auto series = ReadSamplesCsv(out);
  ASSERT_TRUE(series.ok()) << EnglishText(series.error().what);
  EXPECT_FALSE(series->torn_last_line);
  EXPECT_EQ(series->header.at("device"), "none");
  EXPECT_EQ(series->header.at("platform"), "none");
  ASSERT_FALSE(series->notes.empty());
  EXPECT_NE(series->notes[0].find("GPU columns are empty"), std::string::npos);
  ASSERT_GE(series->samples.size(), 3u);
  for (const auto& s : series->samples) {
    EXPECT_FALSE(s.temperature_c || s.power_mw || s.sm_clock_mhz || s.clock_event_reasons);
    EXPECT_TRUE(s.mem_total_bytes && s.mem_available_bytes && s.mem_free_bytes);
  }
  // Row text: the GPU fields are empty, not 0.
  const size_t row = csv.rfind('\n', csv.size() - 2) + 1;
  EXPECT_NE(csv.substr(row).find("+00:00,,,,,,,,"), std::string::npos) << csv.substr(row);

  // A power cut in the middle of a row: the reader skips the torn line.
  const size_t n = series->samples.size();
  fs::resize_file(out, csv.size() - 10);
  auto torn = ReadSamplesCsv(out);
  ASSERT_TRUE(torn.ok());
  EXPECT_TRUE(torn->torn_last_line);
  EXPECT_EQ(torn->samples.size(), n - 1);
}

TEST_F(WatchCli, UsageErrors) {
  const std::string out = (dir_ / "s.csv").string();
  struct Row {
    std::vector<std::string> args;
    std::string err;
  };
  const Row rows[] = {
      {{"watch", "--interval", "50ms", "--out", out},
       "--interval: 50ms is below the minimum of 100ms"},
      {{"watch", "--interval", "soon", "--out", out}, "--interval"},
      {{"watch", "--log", out + ".log", "--out", out}, "--log: needs a command"},
      {{"watch", "--guard", "--out", out}, "--guard: needs a command"},
      {{"watch", "--out", (dir_ / "no/such/dir/s.csv").string(), "--nvml-lib", "/nonexistent"},
       "--out: open("},
  };
  for (const auto& row : rows) {
    const auto r = RunCli(row.args, 10000);
    EXPECT_EQ(r.status, 2) << row.args[2];
    EXPECT_NE(r.err.find(row.err), std::string::npos) << r.err;
  }
  const auto help = RunCli({"watch", "--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("exit status: with a command, the command's own"), std::string::npos);
}

}  // namespace
}  // namespace headroom
