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

// Rank 1's frame of `kind` in run `run` (a join carries no run but a challenge).
std::string CoordinatorFrame(MessageKind kind, uint64_t sequence, uint64_t run,
                             std::string_view secret = kSecret) {
  GroupMessage m;
  m.job_id = "job";
  m.node_rank = 1;
  if (kind == MessageKind::kJoin) {
    m.challenge = 0xc4a11e46e;
  } else {
    m.run = run;
  }
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

// The frames waiting on `fd`, decoded under the test's secret (an undecodable one ends the
// list); with `want`, waiting up to 500 ms for that many (a second small frame may wait for
// the first one's ACK: Nagle).
std::vector<GroupMessage> Received(int fd, size_t want = 0) {
  std::string bytes;
  char buffer[4096];
  for (int round = 0; round < 50; ++round) {
    for (ssize_t n; (n = recv(fd, buffer, sizeof buffer, MSG_DONTWAIT)) > 0;) {
      bytes.append(buffer, static_cast<size_t>(n));
    }
    if (bytes.size() >= want * (kHeaderBytes + 3 + kMacBytes)) break;
    usleep(10'000);
  }
  std::vector<GroupMessage> messages;
  FrameReader reader;
  std::vector<std::string> frames;
  (void)reader.Feed(bytes, frames);
  for (const auto& frame : frames) {
    auto m = DecodeMessage(frame, kSecret, "job");
    if (!m) break;
    messages.push_back(*m);
  }
  return messages;
}

// Joins as rank 1 on `fd` (join sequence `sequence`) and reads the welcome: the run's nonce,
// 0 when no welcome answering the join came. Then the first frame of the run (a heartbeat,
// sequence + 1): the connection is a member.
uint64_t Handshake(Coordinator& c, int fd, uint64_t sequence = 1, int64_t now_ms = 0) {
  Send(fd, CoordinatorFrame(MessageKind::kJoin, sequence, 0));
  (void)PollFor(c, now_ms, 2);
  const auto got = Received(fd, 1);
  if (got.size() != 1 || got[0].kind != MessageKind::kWelcome || got[0].node_rank != 0 ||
      got[0].challenge != 0xc4a11e46e) {
    return 0;
  }
  Send(fd, CoordinatorFrame(MessageKind::kHeartbeat, sequence + 1, got[0].run));
  return got[0].run;
}

TEST(Coordinator, AMemberJoinsHeartbeatsAndReportsItsMemoryEnd) {
  auto c = Start();
  ASSERT_TRUE(c);
  EXPECT_NE(c->port(), 0);
  const int fd = Connect(c->port());
  const uint64_t run = Handshake(*c, fd);
  EXPECT_EQ(run, c->run());
  EXPECT_FALSE(PollFor(*c, 0, 4));
  EXPECT_EQ(c->connections(), 1u);
  EXPECT_EQ(c->members(), 1u);
  Send(fd, CoordinatorFrame(MessageKind::kEndedForMemory, 3, run));
  EXPECT_EQ(PollFor(*c, 100), (Verdict{VerdictKind::kPeerEndedForMemory, 1, 3, 4, 0}));
  EXPECT_EQ(c->refused(), 0u);
  close(fd);
}

TEST(Coordinator, ASilentMemberIsLostAfterTheTimeout) {
  auto c = Start();
  ASSERT_TRUE(c);
  const int fd = Connect(c->port());
  ASSERT_NE(Handshake(*c, fd), 0u);
  EXPECT_FALSE(PollFor(*c, 0, 4));
  EXPECT_FALSE(c->Poll(0, 1000, kNow));
  EXPECT_EQ(c->Poll(0, 1001, kNow), (Verdict{VerdictKind::kPeerLost, 1, 0, 0, 0}));
  close(fd);
}

TEST(Coordinator, AForgedOrReplayedFrameIsIgnoredAndItsConnectionClosed) {
  auto c = Start();
  ASSERT_TRUE(c);
  const int forger = Connect(c->port());
  Send(forger,
       CoordinatorFrame(MessageKind::kEndedForMemory, 1, c->run(), "not-the-secret-at-all"));
  EXPECT_FALSE(PollFor(*c, 0));
  EXPECT_EQ(c->refused(), 1u);
  EXPECT_EQ(c->connections(), 0u);
  const int member = Connect(c->port());
  const uint64_t run = Handshake(*c, member, 4);  // its heartbeat is sequence 5
  ASSERT_NE(run, 0u);
  EXPECT_FALSE(PollFor(*c, 0, 4));
  const int replayer = Connect(c->port());
  Send(replayer, CoordinatorFrame(MessageKind::kFailed, 5, run));  // sequence 5 again
  EXPECT_FALSE(PollFor(*c, 0));
  EXPECT_EQ(c->refused(), 2u);
  EXPECT_EQ(c->connections(), 1u);  // the honest member stays
  const int garbage = Connect(c->port());
  Send(garbage, std::string(4096, '\xff'));  // a 64 KiB length: refused, not buffered
  EXPECT_FALSE(PollFor(*c, 0));
  EXPECT_EQ(c->refused(), 3u);
  // A replayer that joins first (a join is answered) still cannot reuse sequence 5.
  const int joiner = Connect(c->port());
  EXPECT_EQ(Handshake(*c, joiner, 4), run);  // its "heartbeat 5" is the replay
  EXPECT_FALSE(PollFor(*c, 0));
  EXPECT_EQ(c->refused(), 4u);
  EXPECT_EQ(c->connections(), 1u);
  for (const int fd : {forger, member, replayer, garbage, joiner}) close(fd);
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
  const uint64_t run = Handshake(*c, member);
  ASSERT_NE(run, 0u);
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
  Send(member, CoordinatorFrame(MessageKind::kFailed, 3, run));
  EXPECT_EQ(PollFor(*c, 500), (Verdict{VerdictKind::kPeerFailed, 1, 0, 0, 0}));
  for (const int fd : strangers) close(fd);
  close(member);
}

// Issue 29: frames are bound to the run. A member's frames captured in run 1 (its join and
// its failed report) are sent to run 2's coordinator, same job id and secret: the report
// alone is refused (a stranger's first frame must be a join), and after the replayed join,
// which is answered, it is refused for its run. Nothing ends run 2.
TEST(Coordinator, AFrameOfAnEarlierRunIsRefused) {
  auto run1 = Start();
  ASSERT_TRUE(run1);
  const int member = Connect(run1->port());
  const uint64_t first = Handshake(*run1, member);
  ASSERT_NE(first, 0u);
  const std::string join = CoordinatorFrame(MessageKind::kJoin, 1, 0);
  const std::string failed = CoordinatorFrame(MessageKind::kFailed, 9, first);
  Send(member, failed);
  EXPECT_EQ(PollFor(*run1, 0), (Verdict{VerdictKind::kPeerFailed, 1, 0, 0, 0}));
  close(member);
  run1.reset();
  auto run2 = Start();
  ASSERT_TRUE(run2);
  EXPECT_NE(run2->run(), first);
  const int report_alone = Connect(run2->port());
  Send(report_alone, failed);
  EXPECT_FALSE(PollFor(*run2, 0));
  EXPECT_EQ(run2->refused(), 1u);
  const int join_then_report = Connect(run2->port());
  Send(join_then_report, join);
  EXPECT_FALSE(PollFor(*run2, 0, 2));
  const auto welcome = Received(join_then_report, 1);
  ASSERT_EQ(welcome.size(), 1u);
  EXPECT_EQ(welcome[0].run, run2->run());
  Send(join_then_report, failed);
  EXPECT_FALSE(PollFor(*run2, 0));
  EXPECT_EQ(run2->refused(), 2u);
  EXPECT_EQ(run2->connections(), 0u);
  EXPECT_FALSE(run2->membership().AllLeft());  // rank 1 neither joined nor ended
  EXPECT_EQ(run2->membership().FirstMissing(), std::optional<uint16_t>(1));
  close(report_alone);
  close(join_then_report);
}

// A stranger gets nothing but the welcome its join earns: heartbeats and aborts go to members.
TEST(Coordinator, SendsNothingToAConnectionThatHasNotAuthenticated) {
  auto c = Start();
  ASSERT_TRUE(c);
  const int member = Connect(c->port());
  ASSERT_NE(Handshake(*c, member), 0u);
  const int listener = Connect(c->port());
  const int joined_only = Connect(c->port());
  Send(joined_only, CoordinatorFrame(MessageKind::kJoin, 1, 0));
  EXPECT_FALSE(PollFor(*c, 0, 2));
  EXPECT_EQ(Received(joined_only, 1).size(), 1u);  // its welcome
  c->Broadcast(MessageKind::kHeartbeat, kNow);
  c->BroadcastAbort(Verdict{VerdictKind::kPeerLost, 1, 0, 0, 0}, kNow);
  EXPECT_EQ(Received(member, 2).size(), 2u);
  EXPECT_TRUE(Received(listener).empty());
  EXPECT_TRUE(Received(joined_only).empty());
  for (const int fd : {member, listener, joined_only}) close(fd);
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
