#include "group/member.h"

#include <gtest/gtest.h>

#include "group/coordinator.h"

namespace headroom::group {
namespace {

constexpr std::string_view kSecret = "member-test-secret-0123";
constexpr uint64_t kNow = 1'800'000'000'000;

std::unique_ptr<Coordinator> StartCoordinator() {
  CoordinatorSettings s;
  s.host = "127.0.0.1";
  s.job_id = "job";
  s.secret = std::string(kSecret);
  s.nodes = 2;
  s.heartbeat_timeout_ms = 1000;
  auto c = Coordinator::Listen(s);
  return c ? std::move(*c) : nullptr;
}

std::unique_ptr<Member> Join(uint16_t port, std::string_view secret = kSecret) {
  MemberSettings s;
  s.host = "127.0.0.1";
  s.port = port;
  s.job_id = "job";
  s.secret = std::string(secret);
  s.heartbeat_ms = 100;
  s.heartbeat_timeout_ms = 1000;
  auto m = Member::Connect(s, 0, kNow);
  EXPECT_TRUE(m.ok()) << (m ? "" : EnglishText(m.error().what));
  return m ? std::move(*m) : nullptr;
}

std::optional<Verdict> Drain(Coordinator& c, int64_t now_ms) {
  for (int i = 0; i < 6; ++i) {
    if (auto v = c.Poll(50, now_ms, kNow)) return v;
  }
  return std::nullopt;
}

TEST(Member, JoinsReportsAndHearsTheAbort) {
  auto c = StartCoordinator();
  ASSERT_TRUE(c);
  auto m = Join(c->port());
  ASSERT_TRUE(m);
  EXPECT_FALSE(Drain(*c, 0));
  EXPECT_EQ(c->connections(), 1u);
  EXPECT_FALSE(m->Poll(0, 150, kNow));  // a heartbeat goes out
  EXPECT_FALSE(Drain(*c, 150));
  ASSERT_TRUE(m->Send(MessageKind::kFailed, kNow, 0, 0, 137).ok());
  EXPECT_EQ(Drain(*c, 200), (Verdict{VerdictKind::kPeerFailed, 1, 0, 0, 137}));
  c->Broadcast(MessageKind::kHeartbeat, kNow);
  EXPECT_FALSE(m->Poll(200, 200, kNow));
  c->Broadcast(MessageKind::kAbort, kNow);
  EXPECT_EQ(m->Poll(200, 250, kNow), (Verdict{VerdictKind::kAborted, 0, 0, 0, 0}));
  EXPECT_EQ(c->refused(), 0u);
}

TEST(Member, LosesTheCoordinatorWhenItsSocketClosesOrItFallsSilent) {
  auto c = StartCoordinator();
  ASSERT_TRUE(c);
  auto silent = Join(c->port());
  auto closed = Join(c->port());
  ASSERT_TRUE(silent && closed);
  EXPECT_FALSE(Drain(*c, 0));
  EXPECT_FALSE(silent->Poll(0, 1000, kNow));
  EXPECT_EQ(silent->Poll(0, 1001, kNow), (Verdict{VerdictKind::kPeerLost, 0, 0, 0, 0}));
  c.reset();
  EXPECT_EQ(closed->Poll(200, 10, kNow), (Verdict{VerdictKind::kPeerLost, 0, 0, 0, 0}));
}

TEST(Member, WithTheWrongSecretIsDroppedWithoutEffect) {
  auto c = StartCoordinator();
  ASSERT_TRUE(c);
  auto m = Join(c->port(), "the-wrong-secret-entirely");
  ASSERT_TRUE(m);
  ASSERT_TRUE(m->Send(MessageKind::kEndedForMemory, kNow, 1, 2).ok());
  EXPECT_FALSE(Drain(*c, 0));
  EXPECT_EQ(c->refused(), 1u);
  EXPECT_EQ(c->connections(), 0u);
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
  s.secret = std::string(kSecret);
  EXPECT_FALSE(Member::Connect(s, 0, kNow).ok());
  s.secret = "short";
  EXPECT_FALSE(Member::Connect(s, 0, kNow).ok());
}

}  // namespace
}  // namespace headroom::group
