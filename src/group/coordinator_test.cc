#include "group/coordinator.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace headroom::group {
namespace {

constexpr std::string_view kSecret = "coordinator-test-secret";
constexpr uint64_t kNow = 1'800'000'000'000;

std::unique_ptr<Coordinator> Start(uint16_t nodes = 2, int64_t handshake_timeout_ms = 3000) {
  CoordinatorSettings s;
  s.handshake_timeout_ms = handshake_timeout_ms;
  s.host = "127.0.0.1";
  s.job_id = "job";
  s.secret = std::string(kSecret);
  s.nodes = nodes;
  s.heartbeat_timeout_ms = 1000;
  auto c = Coordinator::Listen(s);
  EXPECT_TRUE(c.ok()) << (c ? "" : EnglishText(c.error().what));
  return c ? std::move(*c) : nullptr;
}

// A member's socket, connected to the coordinator's port on loopback.
int Connect(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  return fd;
}

std::string CoordinatorFrame(MessageKind kind, uint64_t sequence,
                             std::string_view secret = kSecret) {
  GroupMessage m;
  m.job_id = "job";
  m.node_rank = 1;
  m.sequence = sequence;
  m.sent_unix_ms = kNow;
  m.kind = kind;
  if (kind == MessageKind::kEndedForMemory) {
    m.available_bytes = 3;
    m.level_bytes = 4;
  }
  return *EncodeMessage(m, secret);
}

void Send(int fd, const std::string& bytes) {
  ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
}

// Polls until a verdict or `rounds` polls of 50 ms have passed, at monotonic time `now_ms`.
std::optional<Verdict> PollFor(Coordinator& c, int64_t now_ms, int rounds = 10) {
  for (int i = 0; i < rounds; ++i) {
    if (auto v = c.Poll(50, now_ms, kNow)) return v;
  }
  return std::nullopt;
}

TEST(Coordinator, AMemberJoinsHeartbeatsAndReportsItsMemoryEnd) {
  auto c = Start();
  ASSERT_TRUE(c);
  EXPECT_NE(c->port(), 0);
  const int fd = Connect(c->port());
  Send(fd, CoordinatorFrame(MessageKind::kJoin, 1) + CoordinatorFrame(MessageKind::kHeartbeat, 2));
  EXPECT_FALSE(PollFor(*c, 0, 4));
  EXPECT_EQ(c->connections(), 1u);
  Send(fd, CoordinatorFrame(MessageKind::kEndedForMemory, 3));
  EXPECT_EQ(PollFor(*c, 100), (Verdict{VerdictKind::kPeerEndedForMemory, 1, 3, 4, 0}));
  EXPECT_EQ(c->refused(), 0u);
  close(fd);
}

TEST(Coordinator, ASilentMemberIsLostAfterTheTimeout) {
  auto c = Start();
  ASSERT_TRUE(c);
  const int fd = Connect(c->port());
  Send(fd, CoordinatorFrame(MessageKind::kJoin, 1));
  EXPECT_FALSE(PollFor(*c, 0, 4));
  EXPECT_FALSE(c->Poll(0, 1000, kNow));
  EXPECT_EQ(c->Poll(0, 1001, kNow), (Verdict{VerdictKind::kPeerLost, 1, 0, 0, 0}));
  close(fd);
}

TEST(Coordinator, AForgedOrReplayedFrameIsIgnoredAndItsConnectionClosed) {
  auto c = Start();
  ASSERT_TRUE(c);
  const int forger = Connect(c->port());
  Send(forger, CoordinatorFrame(MessageKind::kEndedForMemory, 1, "not-the-secret-at-all"));
  EXPECT_FALSE(PollFor(*c, 0));
  EXPECT_EQ(c->refused(), 1u);
  EXPECT_EQ(c->connections(), 0u);
  const int member = Connect(c->port());
  Send(member, CoordinatorFrame(MessageKind::kJoin, 5));
  EXPECT_FALSE(PollFor(*c, 0, 4));
  const int replayer = Connect(c->port());
  Send(replayer, CoordinatorFrame(MessageKind::kFailed, 5));  // sequence 5 again
  EXPECT_FALSE(PollFor(*c, 0));
  EXPECT_EQ(c->refused(), 2u);
  EXPECT_EQ(c->connections(), 1u);  // the honest member stays
  const int garbage = Connect(c->port());
  Send(garbage, std::string(4096, '\xff'));  // a 64 KiB length: refused, not buffered
  EXPECT_FALSE(PollFor(*c, 0));
  EXPECT_EQ(c->refused(), 3u);
  for (const int fd : {forger, member, replayer, garbage}) close(fd);
}

TEST(Coordinator, RefusesConnectionsPastTheCap) {
  auto c = Start(/*nodes=*/2);  // cap: 4
  ASSERT_TRUE(c);
  std::vector<int> fds;
  for (int i = 0; i < 6; ++i) fds.push_back(Connect(c->port()));
  EXPECT_FALSE(PollFor(*c, 0, 4));
  EXPECT_EQ(c->connections(), 4u);
  EXPECT_EQ(c->refused(), 2u);
  for (const int fd : fds) close(fd);
}

// Issue 29: strangers (connections that have not authenticated) have their own budget, twice
// the node count, and a handshake deadline; past the budget the oldest stranger goes, never
// a member, and a member's place never counts against it.
TEST(Coordinator, StrangersPastTheirBudgetCloseTheOldestNeverAMember) {
  auto c = Start(/*nodes=*/2, /*handshake_timeout_ms=*/500);
  ASSERT_TRUE(c);
  EXPECT_EQ(StrangerBudget(2), 4u);
  const int member = Connect(c->port());
  Send(member, CoordinatorFrame(MessageKind::kJoin, 1));
  EXPECT_FALSE(PollFor(*c, 0, 2));
  std::vector<int> strangers;
  for (int i = 0; i < 5; ++i) {
    strangers.push_back(Connect(c->port()));
    EXPECT_FALSE(PollFor(*c, 0, 2));
  }
  EXPECT_EQ(c->members(), 1u);
  EXPECT_EQ(c->strangers(), 4u);
  char byte = 0;
  EXPECT_EQ(recv(strangers[0], &byte, 1, MSG_DONTWAIT), 0);   // the oldest was closed
  EXPECT_EQ(recv(strangers[4], &byte, 1, MSG_DONTWAIT), -1);  // the newest is held
  // At the handshake deadline (0.5 s after they came) every stranger goes; the member stays.
  EXPECT_FALSE(c->Poll(0, 499, kNow));
  EXPECT_EQ(c->strangers(), 4u);
  EXPECT_FALSE(c->Poll(0, 500, kNow));
  EXPECT_EQ(c->strangers(), 0u);
  EXPECT_EQ(c->members(), 1u);
  EXPECT_EQ(c->refused(), 5u);
  Send(member, CoordinatorFrame(MessageKind::kFailed, 2));
  EXPECT_EQ(PollFor(*c, 500), (Verdict{VerdictKind::kPeerFailed, 1, 0, 0, 0}));
  for (const int fd : strangers) close(fd);
  close(member);
}

TEST(Coordinator, RefusesAHostThatIsNotANumericAddress) {
  CoordinatorSettings s;
  s.host = "localhost";
  s.job_id = "job";
  s.secret = std::string(kSecret);
  const auto c = Coordinator::Listen(s);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(EnglishText(c.error().what), "--group: localhost: not a numeric IPv4 address");
}

// Issue 29: at the descriptor limit accept4 fails with EMFILE and the pending connection stays
// in the level-triggered listener; the loop used to wake at once, for ever (8,701 failed
// accepts in 2 s). In a child with RLIMIT_NOFILE lowered and every descriptor taken, three
// connections wait; the child's polls (100 ms each) over one second are counted.
TEST(Coordinator, AtTheDescriptorLimitItBacksOffInsteadOfSpinning) {
  int ready[2], told[2];
  ASSERT_EQ(pipe2(ready, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(told, O_CLOEXEC), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    CoordinatorSettings s;
    s.host = "127.0.0.1";
    s.job_id = "job";
    s.secret = std::string(kSecret);
    s.heartbeat_timeout_ms = 1000;
    auto c = Coordinator::Listen(s);
    if (!c) _exit(10);
    rlimit limit{64, 64};
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) _exit(11);
    while (eventfd(0, EFD_CLOEXEC) >= 0) {
    }
    if (errno != EMFILE) _exit(12);
    const uint16_t port = (*c)->port();
    if (write(ready[1], &port, sizeof port) != sizeof port) _exit(13);
    char go = 0;
    if (read(told[0], &go, 1) != 1) _exit(14);  // the connections are queued
    timespec start{}, now{};
    clock_gettime(CLOCK_MONOTONIC, &start);
    uint32_t polls = 0;
    int64_t elapsed_ms = 0;
    do {
      (void)(*c)->Poll(100, elapsed_ms, kNow);
      ++polls;
      clock_gettime(CLOCK_MONOTONIC, &now);
      elapsed_ms = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1'000'000;
    } while (elapsed_ms < 1000);
    _exit(write(ready[1], &polls, sizeof polls) == sizeof polls ? 0 : 15);
  }
  close(ready[1]);
  close(told[0]);
  uint16_t port = 0;
  ASSERT_EQ(read(ready[0], &port, sizeof port), static_cast<ssize_t>(sizeof port));
  std::vector<int> fds;
  for (int i = 0; i < 3; ++i) fds.push_back(Connect(port));
  ASSERT_EQ(write(told[1], "g", 1), 1);
  uint32_t polls = 0;
  const ssize_t got = read(ready[0], &polls, sizeof polls);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  ASSERT_EQ(got, static_cast<ssize_t>(sizeof polls));
  // Ten 100 ms timeouts in the second, and a few wakeups for the connections: not thousands.
  EXPECT_LE(polls, 40u);
  // The reserve descriptor let each waiting connection be taken and closed: none hangs.
  for (const int fd : fds) {
    char byte = 0;
    EXPECT_EQ(recv(fd, &byte, 1, MSG_DONTWAIT), 0) << "a connection was left waiting";
    close(fd);
  }
  close(ready[0]);
  close(told[1]);
}

}  // namespace
}  // namespace headroom::group
