// `headroom export` as a real process on loopback: what it serves (fixture tree + fake NVML
// GB10), promtool's verdict on it, errors for bad requests, the journal's counters, a clean
// exit on SIGTERM, a bounded load with slow and idle clients, and a real Prometheus scraping
// it and answering a query.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "run_cli.h"
#include "store/journal.h"
#include "testing_files.h"

namespace headroom {
namespace {

using Clock = std::chrono::steady_clock;
using testing::Contains;
const std::string kIdleTree = testing::FixturePath("gb10-idle");

// Runs a program with extra environment, its stderr on a pipe; SIGTERM then SIGKILL at the end.
class Process {
 public:
  Process(const std::vector<std::string>& argv, const std::vector<std::string>& env_extra) {
    int err[2];
    if (pipe2(err, O_CLOEXEC) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(err[1], 2);
      const int devnull = open("/dev/null", O_WRONLY);
      dup2(devnull, 1);
      for (const auto& e : env_extra) putenv(const_cast<char*>(e.c_str()));
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    close(err[1]);
    err_fd_ = err[0];
  }
  ~Process() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (err_fd_ >= 0) close(err_fd_);
  }
  pid_t pid() const { return pid_; }
  // Reads stderr until `pattern` matches or `timeout` passes; the whole text read so far.
  std::string ReadErrUntil(const std::regex& pattern, std::chrono::milliseconds timeout) {
    const auto end = Clock::now() + timeout;
    while (!std::regex_search(err_, pattern) && Clock::now() < end) {
      pollfd p{err_fd_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char buf[4096];
      const ssize_t n = read(err_fd_, buf, sizeof buf);
      if (n <= 0) break;
      err_.append(buf, static_cast<size_t>(n));
    }
    return err_;
  }
  // SIGTERM and wait up to `timeout`; the exit status, or -1 if still running.
  int Stop(std::chrono::milliseconds timeout) {
    kill(pid_, SIGTERM);
    return Wait(timeout);
  }
  // Waits up to `timeout` without a signal.
  int Wait(std::chrono::milliseconds timeout) {
    const auto end = Clock::now() + timeout;
    while (Clock::now() < end) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        reaped_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  int err_fd_ = -1;
  bool reaped_ = false;
  std::string err_;
};

// One HTTP exchange on loopback: sends `request` whole, reads to EOF (bounded).
std::string Exchange(uint16_t port, const std::string& request, int timeout_ms = 5000) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    (void)!send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    const auto end = Clock::now() + std::chrono::milliseconds(timeout_ms);
    while (Clock::now() < end) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char buf[8192];
      const ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  return out;
}

std::string Get(uint16_t port, const std::string& path, const std::string& extra = "") {
  // Connection: close, or a keep-alive server (Prometheus) leaves the read waiting for EOF.
  return Exchange(port, "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" +
                            extra + "\r\n");
}

std::string Body(const std::string& response) {
  const size_t p = response.find("\r\n\r\n");
  return p == std::string::npos ? "" : response.substr(p + 4);
}

// A response is valid when it has a status line and its body is Content-Length bytes.
bool ValidResponse(const std::string& r, int status) {
  if (!r.starts_with("HTTP/1.1 " + std::to_string(status) + " ")) return false;
  std::smatch m;
  if (!std::regex_search(r, m, std::regex("Content-Length: ([0-9]+)\r\n"))) return false;
  return Body(r).size() == std::stoul(m[1]);
}

struct Exporter {
  testing::TempDir dir{"export-cli"};
  std::unique_ptr<Process> process;
  uint16_t port = 0;
  std::string err;
  explicit Exporter(std::vector<std::string> extra_args = {},
                    const std::string& host = "127.0.0.1") {
    testing::WriteFile(dir / "nvml", "scenario gb10\ndegrade_after 1000000\n");
    std::vector<std::string> argv = {
        HEADROOM_BINARY, "export", "--listen", host + ":0",  "--interval",
        "200ms",         "--root", kIdleTree,  "--nvml-lib", HEADROOM_FAKE_NVML_PATH};
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    // Under ASan, freed memory waits in a quarantine (256 MB by default) that would read as
    // RSS growth in the load test; a small one keeps RSS meaningful. LeakSanitizer still runs.
    const char* asan = std::getenv("ASAN_OPTIONS");
    process = std::make_unique<Process>(
        argv, std::vector<std::string>{"HEADROOM_FAKE_NVML_SCRIPT=" + (dir / "nvml").string(),
                                       std::string("ASAN_OPTIONS=") +
                                           (asan ? std::string(asan) + ":" : "") +
                                           "quarantine_size_mb=1"});
    err = process->ReadErrUntil(std::regex("/metrics, sampling"), std::chrono::seconds(20));
    std::smatch m;
    if (std::regex_search(err, m, std::regex(":([0-9]+)/metrics")))
      port = static_cast<uint16_t>(std::stoi(m[1]));
  }
};

int RssKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("VmRSS:")) return std::stoi(line.substr(6));
  }
  return -1;
}

size_t OpenFds(pid_t pid) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd"))
    ++n;
  return n;
}

TEST(ExportCli, ServesGb10MetricsThatPromtoolAccepts) {
  Exporter e({"--no-journal"});
  ASSERT_NE(e.port, 0) << e.err;
  const std::string r = Get(e.port, "/metrics");
  ASSERT_TRUE(ValidResponse(r, 200)) << r;
  EXPECT_TRUE(Contains(r, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
  const std::string body = Body(r);
  for (const char* part :
       {"headroom_memory_total_bytes 130663165952\n",
        "headroom_gpu_memory_total_bytes{gpu=\"0\",name=\"NVIDIA GB10\",source=\"meminfo\"} "
        "130663165952\n",
        "headroom_gpu_power_limit_watts{gpu=\"0\",name=\"NVIDIA GB10\",kind=\"sustained\"} 100\n",
        "headroom_gpu_throttle_seconds_total{gpu=\"0\",name=\"NVIDIA "
        "GB10\",reason=\"sw_power_cap\"} 0\n",
        "headroom_gpu_process_memory_bytes{gpu=\"0\",name=\"NVIDIA GB10\",pid=\"4242\"",
        "headroom_platform_info{kind=\"gb10\",gpu=\"NVIDIA "
        "GB10\",driver=\"580.95.05\",cuda=\"13.0\"",
        "headroom_memory_pressure_stalled_seconds_total{kind=\"some\"} 0.184233\n",
        // The dcgm-exporter names DCGM's Grafana dashboard reads, FB from the pool on GB10.
        "# TYPE DCGM_FI_DEV_FB_FREE gauge\nDCGM_FI_DEV_FB_FREE{gpu=\"0\",UUID=\"",
        "# TYPE DCGM_FI_DEV_FB_USED gauge\nDCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"",
        "# TYPE DCGM_FI_DEV_GPU_TEMP gauge\nDCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\""}) {
    EXPECT_TRUE(Contains(body, part)) << part << "\n" << body;
  }
  // promtool (Debian's prometheus package) lints the exposition.
  testing::WriteFile(e.dir / "metrics.txt", body);
  const std::string cmd = "promtool check metrics < " + (e.dir / "metrics.txt").string() + " > " +
                          (e.dir / "promtool.out").string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream out(e.dir / "promtool.out");
  std::string lint((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
  EXPECT_EQ(rc, 0) << "promtool check metrics failed (is the prometheus package installed?):\n"
                   << lint;
  // OpenMetrics on request.
  const std::string om =
      Get(e.port, "/metrics", "Accept: application/openmetrics-text; version=1.0.0\r\n");
  EXPECT_TRUE(
      Contains(om, "Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\n"))
      << om;
  EXPECT_TRUE(Body(om).ends_with("# EOF\n"));
  EXPECT_EQ(e.process->Stop(std::chrono::seconds(5)), 0);
}

TEST(ExportCli, NoDcgmNamesServesOnlyHeadroomNames) {
  Exporter e({"--no-journal", "--no-dcgm-names"});
  ASSERT_NE(e.port, 0) << e.err;
  const std::string body = Body(Get(e.port, "/metrics"));
  EXPECT_TRUE(Contains(body, "headroom_gpu_memory_used_bytes{")) << body;
  EXPECT_FALSE(Contains(body, "DCGM_")) << body;
  EXPECT_EQ(e.process->Stop(std::chrono::seconds(5)), 0);
}

TEST(ExportCli, BadRequestsGetErrorsAndNothingChanges) {
  Exporter e({"--no-journal"});
  ASSERT_NE(e.port, 0) << e.err;
  EXPECT_TRUE(ValidResponse(Get(e.port, "/nope"), 404));
  EXPECT_TRUE(ValidResponse(Get(e.port, "/"), 200));
  EXPECT_TRUE(
      ValidResponse(Exchange(e.port, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n"), 405));
  EXPECT_TRUE(ValidResponse(Exchange(e.port, "DELETE /metrics HTTP/1.1\r\n\r\n"), 405));
  EXPECT_TRUE(ValidResponse(Exchange(e.port, "garbage\r\n\r\n"), 400));
  EXPECT_TRUE(ValidResponse(
      Exchange(e.port, "GET /metrics HTTP/1.1\r\nX: " + std::string(20000, 'a') + "\r\n\r\n"),
      431));
  const std::string head = Exchange(e.port, "HEAD /metrics HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(head.starts_with("HTTP/1.1 200 OK\r\n")) << head;
  EXPECT_TRUE(Body(head).empty());
  // The request counter saw them (after the next sample).
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const std::string body = Body(Get(e.port, "/metrics"));
  EXPECT_TRUE(Contains(body, "headroom_exporter_http_requests_total{code=\"404\"} 1\n")) << body;
  EXPECT_TRUE(Contains(body, "headroom_exporter_http_requests_total{code=\"431\"} 1\n")) << body;
  EXPECT_EQ(e.process->Stop(std::chrono::seconds(5)), 0);
  EXPECT_TRUE(Contains(e.process->ReadErrUntil(std::regex("stopped"), std::chrono::seconds(2)),
                       "headroom export: stopped"));
}

// Regression: a head over 8 KiB that the client goes on sending got a TCP reset instead of the
// documented 431. The client here sends 1 MiB of header before it reads.
TEST(ExportCli, AHugeRequestHeadGets431NotAReset) {
  Exporter e({"--no-journal"});
  ASSERT_NE(e.port, 0) << e.err;
  for (int round = 0; round < 3; ++round) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    const timeval limit{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(e.port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    std::string head = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    const std::string line = "X-Filler: " + std::string(1000, 'a') + "\r\n";
    while (head.size() < (1u << 20)) head += line;
    head += "\r\n";
    size_t sent = 0;
    while (sent < head.size()) {
      const ssize_t n = send(fd, head.data() + sent, head.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    EXPECT_EQ(sent, head.size()) << "send: " << std::strerror(errno);
    std::string out;
    char buf[8192];
    for (;;) {
      const ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n <= 0) {
        EXPECT_EQ(n, 0) << "recv: " << std::strerror(errno);
        break;
      }
      out.append(buf, static_cast<size_t>(n));
    }
    close(fd);
    EXPECT_TRUE(ValidResponse(out, 431)) << out.substr(0, 200);
  }
  // Still serving after the lingering connections.
  EXPECT_TRUE(ValidResponse(Get(e.port, "/"), 200));
  EXPECT_EQ(e.process->Stop(std::chrono::seconds(5)), 0);
}

TEST(ExportCli, GuardCountersComeFromTheJournal) {
  testing::TempDir dir("export-journal");
  const auto path = dir / "journal.db";
  {
    auto j = Journal::Open(path);
    ASSERT_TRUE(j) << EnglishText(j.error().what);
    for (int i = 0; i < 3; ++i) {
      auto id =
          j->BeginRun(RunKind::kGuard, {"python", "train.py"}, std::chrono::system_clock::now());
      ASSERT_TRUE(id);
      ASSERT_TRUE(j->FinishRun(*id, i == 0 ? "killed-by-guard" : "exited", i == 0 ? 99 : 0,
                               nlohmann::json{{"warnings", i + 1}}.dump(),
                               std::chrono::system_clock::now()));
    }
  }
  Exporter e({"--journal", path.string()});
  ASSERT_NE(e.port, 0) << e.err;
  const std::string body = Body(Get(e.port, "/metrics"));
  EXPECT_TRUE(Contains(body, "headroom_guard_kills_total 1\n")) << body;
  EXPECT_TRUE(Contains(body, "headroom_guard_warnings_total 6\n")) << body;
  EXPECT_TRUE(Contains(body, "headroom_guard_runs_total 3\n")) << body;
  // Every metric the shipped Grafana dashboard draws is one this exporter serves.
  std::ifstream in(testing::SourcePath("share/grafana/headroom-dashboard.json"));
  const std::string dashboard((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
  const std::regex name("headroom_[a-z_]+");
  int names = 0;
  for (auto it = std::sregex_iterator(dashboard.begin(), dashboard.end(), name);
       it != std::sregex_iterator(); ++it) {
    EXPECT_TRUE(Contains(body, "\n" + it->str()))
        << it->str() << " is in the dashboard but not served";
    ++names;
  }
  EXPECT_GT(names, 10);
}

// The live page (docs/export.md, "The live page"): named at start, served at / as HTML with its
// data at /live.json, which carries this exporter's fixture figures; nothing but GET and HEAD.
TEST(ExportCli, ServesTheLivePageAndItsData) {
  Exporter e({"--no-journal"});
  ASSERT_NE(e.port, 0) << e.err;
  const std::string line =
      e.process->ReadErrUntil(std::regex("live page at [^\n]*\n"), std::chrono::seconds(10));
  EXPECT_TRUE(Contains(
      line, "headroom export: live page at http://127.0.0.1:" + std::to_string(e.port) + "/\n"))
      << line;
  const std::string page = Get(e.port, "/");
  ASSERT_TRUE(ValidResponse(page, 200)) << page.substr(0, 300);
  EXPECT_TRUE(Contains(page, "Content-Type: text/html; charset=utf-8\r\n"));
  EXPECT_TRUE(Contains(page, "<title>headroom live</title>"));
  const std::string live = Get(e.port, "/live.json");
  ASSERT_TRUE(ValidResponse(live, 200)) << live.substr(0, 300);
  const auto j = nlohmann::json::parse(Body(live));
  EXPECT_EQ(j["now"]["memory"]["total_bytes"], 130663165952ULL);
  EXPECT_EQ(j["now"]["platform"]["kind"], "gb10");
  EXPECT_TRUE(j["history"]["recent"].is_array());
  const std::string head = Exchange(e.port, "HEAD /live.json HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(head.starts_with("HTTP/1.1 200 ")) << head;
  EXPECT_EQ(Body(head), "") << "HEAD: the head only";
  for (const char* method : {"POST", "PUT", "DELETE"}) {
    const std::string r =
        Exchange(e.port, std::string(method) + " /live.json HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_TRUE(r.starts_with("HTTP/1.1 405 ")) << method << ": " << r;
  }
  EXPECT_EQ(e.process->Stop(std::chrono::seconds(5)), 0);
}

TEST(ExportCli, AnyOtherAddressThanLoopbackWarnsAndUsageErrors) {
  {
    Exporter e({"--no-journal", "--allow-remote"}, "0.0.0.0");
    ASSERT_NE(e.port, 0) << e.err;
    EXPECT_TRUE(Contains(
        e.err, "headroom: export: warning: listening on 0.0.0.0, reachable from other machines"))
        << e.err;
    EXPECT_EQ(e.process->Stop(std::chrono::seconds(5)), 0);
  }
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  for (const Case& c :
       {Case{{"--listen", "nowhere"}, "headroom: export: --listen: 'nowhere' is not HOST:PORT\n"},
        // Regression: another address than loopback needs the opt-in, not only a warning.
        Case{{"--listen", "0.0.0.0:0"},
             "headroom: export: --listen: 0.0.0.0 is not a loopback address: /metrics shows "
             "process names and memory figures; add --allow-remote to serve other machines\n"},
        Case{{"--listen", "[::]:0"},
             "headroom: export: --listen: :: is not a loopback address: /metrics shows "
             "process names and memory figures; add --allow-remote to serve other machines\n"},
        Case{{"--interval", "10ms"}, "headroom: export: --interval: '10ms' is outside 100ms..1h\n"},
        Case{{"--root", "/nonexistent"},
             "headroom: export: --root: /nonexistent has no proc/ directory\n"}}) {
    std::vector<std::string> argv = {HEADROOM_BINARY, "export"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    Process p(argv, {});
    const std::string err = p.ReadErrUntil(std::regex("\n"), std::chrono::seconds(10));
    EXPECT_EQ(err, c.error);
    EXPECT_EQ(p.Wait(std::chrono::seconds(10)), 2);
  }
}

// Bounded load on loopback: idle connections up to the limit, slow-loris clients, 300 scrapes
// in a row; every answer valid, and the exporter's descriptors and memory flat afterwards.
TEST(ExportCli, StaysFlatUnderSlowAndIdleClients) {
  Exporter e({"--no-journal"});
  ASSERT_NE(e.port, 0) << e.err;
  // Warm up (first allocations), then take the baseline.
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(ValidResponse(Get(e.port, "/metrics"), 200));
  const size_t fds_before = OpenFds(e.process->pid());
  const int rss_before = RssKb(e.process->pid());
  std::vector<int> idle;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(e.port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int i = 0; i < 40; ++i) {  // idle: connect and say nothing
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    idle.push_back(fd);
  }
  for (int i = 0; i < 10; ++i) {  // slow: one byte of a request head
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    (void)!send(fd, "G", 1, MSG_NOSIGNAL);
    idle.push_back(fd);
  }
  int valid = 0;
  const auto start = Clock::now();
  for (int i = 0; i < 300; ++i) {
    const std::string r = Get(e.port, "/metrics");
    valid += ValidResponse(r, 200) && Contains(r, "headroom_memory_total_bytes");
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_EQ(valid, 300);
  EXPECT_LT(seconds, 60.0);  // a bound against a stall, not a speed claim (bench/ has those)
  for (int fd : idle) close(fd);
  // The server drops closed and timed-out connections; give it a moment.
  size_t fds_after = 0;
  for (int i = 0; i < 50; ++i) {
    fds_after = OpenFds(e.process->pid());
    if (fds_after <= fds_before) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_LE(fds_after, fds_before);
  const int rss_after = RssKb(e.process->pid());
#ifdef HEADROOM_SANITIZED
  constexpr int kRssGrowthKb =
      32 * 1024;  // the sanitizer's allocator caches more; LSan checks leaks
#else
  constexpr int kRssGrowthKb = 8 * 1024;
#endif
  EXPECT_LT(rss_after - rss_before, kRssGrowthKb) << rss_before << " kB -> " << rss_after << " kB";
  EXPECT_EQ(e.process->Stop(std::chrono::seconds(5)), 0);
}

std::string UrlEncode(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '_' || c == '-' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

uint16_t FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

TEST(ExportCli, RealPrometheusScrapesAndAnswersAQuery) {
  ASSERT_EQ(std::system("command -v prometheus > /dev/null"), 0)
      << "the prometheus package is not installed";
  Exporter e({"--no-journal"});
  ASSERT_NE(e.port, 0) << e.err;
  testing::TempDir dir("export-prometheus");
  testing::WriteFile(dir / "prometheus.yml",
                     "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                     "scrape_configs:\n  - job_name: headroom\n    static_configs:\n      - "
                     "targets: ['127.0.0.1:" +
                         std::to_string(e.port) + "']\n");
  const uint16_t web = FreePort();
  Process prom({"/usr/bin/prometheus", "--config.file=" + (dir / "prometheus.yml").string(),
                "--storage.tsdb.path=" + (dir / "data").string(),
                "--web.listen-address=127.0.0.1:" + std::to_string(web)},
               {});
  std::string answer;
  const auto end = Clock::now() + std::chrono::seconds(45);
  while (Clock::now() < end) {
    const std::string r = Get(web, "/api/v1/query?query=headroom_gpu_memory_total_bytes");
    answer = Body(r);
    if (Contains(answer, "\"value\"")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  ASSERT_TRUE(Contains(answer, "\"value\""))
      << answer << "\n"
      << prom.ReadErrUntil(std::regex("$^"), std::chrono::milliseconds(10));
  const auto j = nlohmann::json::parse(answer);
  const auto& result = j["data"]["result"][0];
  EXPECT_EQ(result["metric"]["source"], "meminfo");
  EXPECT_EQ(result["metric"]["job"], "headroom");
  EXPECT_EQ(result["value"][1], "130663165952");
  // Every query of the shipped dashboard is valid PromQL here ($instance as ".*").
  const auto dashboard = nlohmann::json::parse(
      std::ifstream(testing::SourcePath("share/grafana/headroom-dashboard.json")));
  int queries = 0;
  for (const auto& panel : dashboard["panels"]) {
    for (const auto& target : panel["targets"]) {
      std::string expr = target["expr"];
      expr = std::regex_replace(expr, std::regex("\\$instance"), ".*");
      const std::string r = Body(Get(web, "/api/v1/query?query=" + UrlEncode(expr)));
      EXPECT_TRUE(Contains(r, "\"status\":\"success\"")) << expr << "\n" << r;
      ++queries;
    }
  }
  EXPECT_GT(queries, 10);
  EXPECT_EQ(prom.Stop(std::chrono::seconds(15)), 0);
  EXPECT_EQ(e.process->Stop(std::chrono::seconds(5)), 0);
}

// `headroom top --node`: two real exporters on loopback, each a pane of its own figures, and a
// port nothing listens on, a pane that says so; the frame comes in one run, exit 0.
TEST(ExportCli, TopShowsOnePanePerNodesExporter) {
  Exporter a({"--no-journal"}), b({"--no-journal"});
  ASSERT_NE(a.port, 0) << a.err;
  ASSERT_NE(b.port, 0) << b.err;
  uint16_t closed = 0;
  {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    closed = ntohs(addr.sin_port);
    ::close(fd);
  }
  const std::string url_a = "http://127.0.0.1:" + std::to_string(a.port);
  const std::string url_b = "127.0.0.1:" + std::to_string(b.port) + "/metrics";
  const std::string url_c = "127.0.0.1:" + std::to_string(closed);
  const auto r =
      testing::RunCli({"top", "--once", "--node", url_a, "--node", url_b, "--node", url_c});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  // gb10-idle's meminfo: MemAvailable 120574075 kB of MemTotal 127600748 kB.
  const std::string memory = "  memory: MemAvailable 114.99 GiB of 121.69 GiB (94%)\n";
  for (const std::string& part : std::vector<std::string>{
           "node " + url_a + " (gb10)\n" + memory, "node " + url_b + " (gb10)\n" + memory,
           "node " + url_c + ": unreachable: connect: "}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  }
  EXPECT_NE(r.out.find("  GPU: "), std::string::npos) << r.out;
  // Bad URLs and the live screen are refused by name.
  auto bad = testing::RunCli({"top", "--once", "--node", "spark-2:9464"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--node: spark-2:9464: 'spark-2' is not an IP address"), std::string::npos)
      << bad.err;
  bad = testing::RunCli({"top", "--node", url_a});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--node: give --once or --iterations N"), std::string::npos) << bad.err;
  bad = testing::RunCli({"top", "--json", "--node", url_a});
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(a.process->Stop(std::chrono::seconds(5)), 0);
  EXPECT_EQ(b.process->Stop(std::chrono::seconds(5)), 0);
}

}  // namespace
}  // namespace headroom
