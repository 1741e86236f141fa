#include "group/membership.h"

#include <gtest/gtest.h>

namespace headroom::group {
namespace {

GroupMessage From(uint16_t rank, MessageKind kind) {
  GroupMessage m;
  m.job_id = "job";
  m.node_rank = rank;
  m.sequence = 1;
  m.kind = kind;
  return m;
}

TEST(Membership, JoinsThenLosesASilentPeerAfterTheTimeout) {
  Membership group(/*nodes=*/3, /*self_rank=*/0, /*heartbeat_timeout_ms=*/2000);
  EXPECT_FALSE(group.AllJoined());
  EXPECT_FALSE(group.OnMessage(From(1, MessageKind::kJoin), 0));
  EXPECT_FALSE(group.AllJoined());
  EXPECT_FALSE(group.OnMessage(From(2, MessageKind::kJoin), 100));
  EXPECT_TRUE(group.AllJoined());
  EXPECT_FALSE(group.OnMessage(From(1, MessageKind::kHeartbeat), 1500));
  EXPECT_FALSE(group.OnTick(2100));  // rank 2 heard 2000 ms ago: not yet past the timeout
  EXPECT_EQ(group.OnTick(2101), (Verdict{VerdictKind::kPeerLost, 2, 0, 0, 0}));
  EXPECT_FALSE(group.OnMessage(From(2, MessageKind::kHeartbeat), 2200));
  EXPECT_FALSE(group.OnTick(3400));
  EXPECT_EQ(group.OnTick(3501), (Verdict{VerdictKind::kPeerLost, 1, 0, 0, 0}));
}

TEST(Membership, KeepsThePeersLongestSilence) {
  Membership group(/*nodes=*/3, /*self_rank=*/0, /*heartbeat_timeout_ms=*/3000);
  EXPECT_EQ(group.longest_silence_ms(), 0);
  group.OnMessage(From(1, MessageKind::kJoin), 1000);
  group.OnMessage(From(2, MessageKind::kJoin), 5000);  // a first message: no silence yet
  EXPECT_EQ(group.longest_silence_ms(), 0);
  group.OnMessage(From(1, MessageKind::kHeartbeat), 1500);
  group.OnMessage(From(1, MessageKind::kHeartbeat), 2800);  // rank 1 silent 1300 ms
  group.OnMessage(From(2, MessageKind::kHeartbeat), 5400);
  EXPECT_EQ(group.longest_silence_ms(), 1300);
  group.OnMessage(From(2, MessageKind::kHeartbeat), 7500);  // rank 2: 2100 ms
  group.OnMessage(From(1, MessageKind::kHeartbeat), 3000);
  EXPECT_EQ(group.longest_silence_ms(), 2100);
  group.OnMessage(From(0, MessageKind::kHeartbeat), 20000);  // its own rank: not a peer
  EXPECT_EQ(group.longest_silence_ms(), 2100);
}

TEST(Membership, AWaitingRankIsNeverLost) {
  Membership group(2, 0, 1000);
  EXPECT_FALSE(group.OnTick(1'000'000));
}

TEST(Membership, ReportsBringTheirVerdicts) {
  Membership group(2, 1, 1000);
  GroupMessage memory = From(0, MessageKind::kEndedForMemory);
  memory.available_bytes = 3;
  memory.level_bytes = 4;
  EXPECT_EQ(group.OnMessage(memory, 0), (Verdict{VerdictKind::kPeerEndedForMemory, 0, 3, 4, 0}));
  GroupMessage failed = From(0, MessageKind::kFailed);
  failed.status = 137;
  EXPECT_EQ(group.OnMessage(failed, 0), (Verdict{VerdictKind::kPeerFailed, 0, 0, 0, 137}));
  GroupMessage abort = From(0, MessageKind::kAbort);
  abort.cause = AbortCause::kMemory;
  abort.origin_rank = 2;
  abort.available_bytes = 3;
  abort.level_bytes = 4;
  EXPECT_EQ(group.OnMessage(abort, 0),
            (Verdict{VerdictKind::kPeerEndedForMemory, 2, 3, 4, 0, /*relayed=*/true}));
  abort.cause = AbortCause::kLost;
  abort.available_bytes = abort.level_bytes = 0;
  EXPECT_EQ(group.OnMessage(abort, 0), (Verdict{VerdictKind::kPeerLost, 2, 0, 0, 0, true}));
}

TEST(Membership, APeerThatLeftIsNeverLostAndAClosedOneIsLostAtOnce) {
  Membership group(3, 0, 1000);
  EXPECT_FALSE(group.OnMessage(From(1, MessageKind::kJoin), 0));
  EXPECT_FALSE(group.OnMessage(From(2, MessageKind::kJoin), 0));
  EXPECT_FALSE(group.FirstMissing());
  EXPECT_FALSE(group.OnMessage(From(1, MessageKind::kDone), 10));
  EXPECT_FALSE(group.AllLeft());
  EXPECT_FALSE(group.OnClosed(1));  // left first: its close is expected
  EXPECT_EQ(group.OnClosed(2), (Verdict{VerdictKind::kPeerLost, 2, 0, 0, 0}));
  EXPECT_FALSE(group.OnClosed(2));  // one verdict per peer
  EXPECT_TRUE(group.AllLeft());
  EXPECT_FALSE(group.OnTick(1'000'000));
}

TEST(Membership, NamesTheFirstRankStillMissing) {
  Membership group(3, 0, 1000);
  EXPECT_EQ(group.FirstMissing(), 1);
  EXPECT_FALSE(group.OnMessage(From(1, MessageKind::kJoin), 0));
  EXPECT_EQ(group.FirstMissing(), 2);
}

TEST(Membership, IgnoresItsOwnRankAndRanksOutOfRange) {
  Membership group(2, 0, 1000);
  EXPECT_FALSE(group.OnMessage(From(0, MessageKind::kAbort), 0));
  EXPECT_FALSE(group.OnMessage(From(5, MessageKind::kAbort), 0));
  EXPECT_FALSE(group.AllJoined());
}

}  // namespace
}  // namespace headroom::group
