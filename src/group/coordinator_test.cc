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

}  // namespace
}  // namespace headroom::group
