// `headroom guard --group` against strangers on rank 0's port (issue 29, docs/guard-group.md
// "The coordinator"): two real guards on loopback, each around its own short job, with plain
// TCP connections that never say a word held open on the coordinator's port. No job here
// allocates memory; every wait is bounded and every process is reaped by its pid.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "run_cli.h"

namespace headroom {
namespace {

constexpr const char* kGroupCliSecret = "HEADROOM_GROUP_SECRET=guard-group-cli-secret-0123456789";

// A port nothing listens on now (bound, read back, closed).
uint16_t UnusedGroupPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof a;
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &size);
  close(fd);
  return ntohs(a.sin_port);
}

// A plain connection to 127.0.0.1:port, or -1.
int PlainConnection(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
  close(fd);
  return -1;
}

// The exit status of `pid` (128 + signal), waited for at most `seconds`; -1 (and the process
// killed) past it.
int WaitExit(pid_t pid, double seconds) {
  const auto stop = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > stop) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::vector<std::string> GroupGuard(uint16_t port, int rank, const std::string& seconds) {
  return {"guard",
          "--no-journal",
          "--no-cgroup",
          "--min-available",
          "64M",
          "--group",
          "127.0.0.1:" + std::to_string(port),
          "--node-rank",
          std::to_string(rank),
          "--nodes",
          "2",
          "--group-wait",
          "8s",
          "--",
          "sleep",
          seconds};
}

// The reproduction: four idle connections, with no secret, on rank 0's port before
// the member joins. Before the fix both guards exited 98: the coordinator counted the
// strangers against its cap and closed the member's connection, which the member had taken
// for "joined".
TEST(GuardGroupCli, FourIdleStrangersDoNotKeepTheGroupFromForming) {
  const uint16_t port = UnusedGroupPort();
  const pid_t rank0 = testing::StartCli(GroupGuard(port, 0, "2"), {kGroupCliSecret});
  ASSERT_GT(rank0, 0);
  std::vector<int> strangers;
  const auto stop = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (strangers.empty() && std::chrono::steady_clock::now() < stop) {
    if (const int fd = PlainConnection(port); fd >= 0) strangers.push_back(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_FALSE(strangers.empty()) << "rank 0's guard never listened on " << port;
  for (int i = 0; i < 3; ++i) strangers.push_back(PlainConnection(port));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // rank 0 takes them all
  const pid_t rank1 = testing::StartCli(GroupGuard(port, 1, "2"), {kGroupCliSecret});
  ASSERT_GT(rank1, 0);
  const int status1 = WaitExit(rank1, 20);
  const int status0 = WaitExit(rank0, 20);
  for (const int fd : strangers) close(fd);
  EXPECT_EQ(status0, 0) << "rank 0";
  EXPECT_EQ(status1, 0) << "rank 1";
}

}  // namespace
}  // namespace headroom
