#include "group/member.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include "group/coordinator.h"
#include "testing_sockets.h"

namespace headroom::group {
namespace {

constexpr std::string_view kMemberSecret = "member-test-secret-0123";
constexpr uint64_t kMemberNow = 1'800'000'000'000;

std::unique_ptr<Coordinator> StartCoordinator() {
  CoordinatorSettings s;
  s.host = "127.0.0.1";
  s.job_id = "job";
  s.secret = std::string(kMemberSecret);
  s.nodes = 2;
  s.heartbeat_timeout_ms = 1000;
  auto c = Coordinator::Listen(s);
  return c ? std::move(*c) : nullptr;
}

MemberSettings Rank1(uint16_t port, std::string_view secret = kMemberSecret) {
  MemberSettings s;
  s.host = "127.0.0.1";
  s.port = port;
  s.job_id = "job";
  s.secret = std::string(secret);
  s.heartbeat_ms = 100;
  s.heartbeat_timeout_ms = 1000;
  return s;
}

// Connects rank 1 to `c` and waits for its welcome, polling `c` in between (at monotonic 0).
std::unique_ptr<Member> Join(Coordinator& c) {
  auto m = Member::Connect(Rank1(c.port()), 0, kMemberNow);
  EXPECT_TRUE(m.ok()) << (m ? "" : EnglishText(m.error().what));
  if (!m) return nullptr;
  for (int i = 0; i < 10 && !(*m)->joined(); ++i) {
    (void)c.Poll(20, 0, kMemberNow);
    (void)(*m)->AwaitWelcome(20, 0, kMemberNow);
  }
  EXPECT_TRUE((*m)->joined());
  return std::move(*m);
}

std::optional<Verdict> Drain(Coordinator& c, int64_t now_ms) {
  for (int i = 0; i < 6; ++i) {
    if (auto v = c.Poll(50, now_ms, kMemberNow)) return v;
  }
  return std::nullopt;
}

TEST(Member, JoinsReportsAndHearsTheAbort) {
  auto c = StartCoordinator();
  ASSERT_TRUE(c);
  auto m = Join(*c);
  ASSERT_TRUE(m);
  EXPECT_FALSE(Drain(*c, 0));
  EXPECT_EQ(c->connections(), 1u);
  EXPECT_FALSE(m->Poll(0, 150, kMemberNow));  // a heartbeat goes out
  EXPECT_FALSE(Drain(*c, 150));
  ASSERT_TRUE(m->Send(MessageKind::kFailed, kMemberNow, 0, 0, 137).ok());
  EXPECT_EQ(Drain(*c, 200), (Verdict{VerdictKind::kPeerFailed, 1, 0, 0, 137}));
  c->Broadcast(MessageKind::kHeartbeat, kMemberNow);
  EXPECT_FALSE(m->Poll(200, 200, kMemberNow));
  c->BroadcastAbort(Verdict{VerdictKind::kPeerFailed, 1, 0, 0, 137}, kMemberNow);
  EXPECT_EQ(m->Poll(200, 250, kMemberNow), (Verdict{VerdictKind::kPeerFailed, 1, 0, 0, 137, true}));
  EXPECT_EQ(c->refused(), 0u);
}

TEST(Member, ThatLeavesIsNotLostAndOneThatVanishesIs) {
  auto c = StartCoordinator();
  ASSERT_TRUE(c);
  auto m = Join(*c);
  ASSERT_TRUE(m);
  EXPECT_FALSE(Drain(*c, 0));
  ASSERT_TRUE(m->Send(MessageKind::kDone, kMemberNow).ok());
  m.reset();
  EXPECT_FALSE(Drain(*c, 10));
  EXPECT_TRUE(c->membership().AllLeft());
  auto gone = Join(*c);  // a second guard for rank 1, which then vanishes
  ASSERT_TRUE(gone);
  EXPECT_FALSE(Drain(*c, 20));
  gone.reset();
  EXPECT_FALSE(Drain(*c, 30));  // rank 1 had left: its later close is not a loss
}

TEST(Member, WhoseGuardDiesIsLostAtOnce) {
  auto c = StartCoordinator();
  ASSERT_TRUE(c);
  auto m = Join(*c);
  ASSERT_TRUE(m);
  EXPECT_FALSE(Drain(*c, 0));
  m.reset();  // the socket closes without a done: the guard was killed
  EXPECT_EQ(Drain(*c, 10), (Verdict{VerdictKind::kPeerLost, 1, 0, 0, 0}));
}

TEST(Member, LosesTheCoordinatorWhenItsSocketClosesOrItFallsSilent) {
  auto c = StartCoordinator();
  ASSERT_TRUE(c);
  auto silent = Join(*c);
  auto closed = Join(*c);
  ASSERT_TRUE(silent && closed);
  EXPECT_FALSE(Drain(*c, 0));
  EXPECT_FALSE(silent->Poll(0, 1000, kMemberNow));
  EXPECT_EQ(silent->Poll(0, 1001, kMemberNow), (Verdict{VerdictKind::kPeerLost, 0, 0, 0, 0}));
  c.reset();
  EXPECT_EQ(closed->Poll(200, 10, kMemberNow), (Verdict{VerdictKind::kPeerLost, 0, 0, 0, 0}));
}

TEST(Member, WithTheWrongSecretIsDroppedWithoutEffect) {
  auto c = StartCoordinator();
  ASSERT_TRUE(c);
  auto m = Member::Connect(Rank1(c->port(), "the-wrong-secret-entirely"), 0, kMemberNow);
  ASSERT_TRUE(m);
  // Its join is refused and its connection closed: no welcome, so it is not joined and has
  // nothing it can send (it would have to know the run).
  EXPECT_FALSE(Drain(*c, 0));
  EXPECT_EQ(c->refused(), 1u);
  EXPECT_EQ(c->connections(), 0u);
  const auto welcomed = (*m)->AwaitWelcome(500, 0, kMemberNow);
  ASSERT_FALSE(welcomed);
  EXPECT_EQ(welcomed.error().errno_value, ECONNRESET);
  EXPECT_FALSE((*m)->joined());
  EXPECT_FALSE((*m)->Send(MessageKind::kEndedForMemory, kMemberNow, 1, 2).ok());
}

// Issue 29: a member used to take a TCP accept for "joined" and start its job. A listener that
// accepts and says nothing, or answers with a welcome that does not echo the join's challenge
// (a replayed one), does not make it joined.
TEST(Member, IsJoinedOnlyByTheCoordinatorsWelcome) {
  const testing::QuietListener quiet(4);
  ASSERT_NE(quiet.port(), 0);
  const int listener = quiet.fd();
  auto m = Member::Connect(Rank1(quiet.port()), 0, kMemberNow);
  ASSERT_TRUE(m);  // the kernel accepted the connection
  const auto silent = (*m)->AwaitWelcome(200, 0, kMemberNow);
  ASSERT_FALSE(silent);
  EXPECT_EQ(silent.error().errno_value, ETIMEDOUT);
  EXPECT_FALSE((*m)->joined());
  EXPECT_FALSE((*m)->Send(MessageKind::kHeartbeat, kMemberNow).ok());
  // A signed welcome for another join's challenge: refused, the connection broken.
  const int peer = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  ASSERT_GE(peer, 0);
  GroupMessage welcome;
  welcome.job_id = "job";
  welcome.node_rank = 0;
  welcome.run = 99;
  welcome.challenge = 12345;
  welcome.sequence = 1;
  welcome.sent_unix_ms = kMemberNow;
  welcome.kind = MessageKind::kWelcome;
  const std::string frame = *EncodeMessage(welcome, kMemberSecret);
  ASSERT_EQ(write(peer, frame.data(), frame.size()), static_cast<ssize_t>(frame.size()));
  const auto replayed = (*m)->AwaitWelcome(500, 0, kMemberNow);
  ASSERT_FALSE(replayed);
  EXPECT_EQ(replayed.error().errno_value, ECONNRESET);
  EXPECT_FALSE((*m)->joined());
  close(peer);
}

TEST(Member, RefusesNoCoordinatorAndAShortSecret) {
  auto c = StartCoordinator();
  ASSERT_TRUE(c);
  const uint16_t port = c->port();
  c.reset();  // nothing listens there now
  MemberSettings s;
  s.host = "127.0.0.1";
  s.port = port;
  s.job_id = "job";
  s.secret = std::string(kMemberSecret);
  EXPECT_FALSE(Member::Connect(s, 0, kMemberNow).ok());
  s.secret = "short";
  EXPECT_FALSE(Member::Connect(s, 0, kMemberNow).ok());
}

TEST(Member, AConnectNobodyAnswersEndsAtItsTimeout) {
  testing::SilentListener silent;
  ASSERT_TRUE(silent.full()) << "the listener's queue never filled";
  MemberSettings s;
  s.host = "127.0.0.1";
  s.port = silent.port();
  s.job_id = "job";
  s.secret = std::string(kMemberSecret);
  s.connect_timeout_ms = 300;
  const auto start = std::chrono::steady_clock::now();
  const auto m = Member::Connect(s, 0, kMemberNow);
  const double waited_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().errno_value, ETIMEDOUT);
  // The kernel's own connect timeout is about two minutes; this one is 300 ms.
  EXPECT_GE(waited_s, 0.25);
  EXPECT_LT(waited_s, 2.0);
}

}  // namespace
}  // namespace headroom::group
