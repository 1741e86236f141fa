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
  EXPECT_EQ(group.OnMessage(From(0, MessageKind::kAbort), 0),
            (Verdict{VerdictKind::kAborted, 0, 0, 0, 0}));
}

TEST(Membership, IgnoresItsOwnRankAndRanksOutOfRange) {
  Membership group(2, 0, 1000);
  EXPECT_FALSE(group.OnMessage(From(0, MessageKind::kAbort), 0));
  EXPECT_FALSE(group.OnMessage(From(5, MessageKind::kAbort), 0));
  EXPECT_FALSE(group.AllJoined());
}

}  // namespace
}  // namespace headroom::group
