// What the coordinator knows of the group, apart from sockets (docs/guard-group.md "What
// ends the group"): which node ranks joined, when each was last heard from on the monotonic
// clock, and the verdict a message or the passing of time brings. Pure: the caller decodes
// and replay-checks each message first, and passes the clock in, so the tests drive time.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "group/group_message.h"

namespace headroom::group {

enum class VerdictKind {
  kPeerEndedForMemory,  // a peer's guard ended its job for memory (its reading, its level)
  kPeerFailed,          // a peer's job exited with a failure (its status)
  kPeerLost,            // a joined peer was silent past the heartbeat timeout, or closed
};

// Why this node's job is to end, and because of which node (`node_rank`: the origin). An
// abort from the coordinator brings its cause's verdict with `relayed` set.
struct Verdict {
  VerdictKind kind = VerdictKind::kPeerLost;
  uint16_t node_rank = 0;
  uint64_t available_bytes = 0;
  uint64_t level_bytes = 0;
  int32_t status = 0;
  bool relayed = false;

  bool operator==(const Verdict&) const = default;
};

class Membership {
 public:
  Membership(uint16_t nodes, uint16_t self_rank, int64_t heartbeat_timeout_ms);

  // An accepted message from a peer, heard at `now_ms`: any message counts as a sign of
  // life; ended-for-memory, failed and abort bring their verdict; done marks the peer as
  // left (never lost after it). A message from this node's own rank or a rank out of range
  // is ignored.
  std::optional<Verdict> OnMessage(const GroupMessage& message, int64_t now_ms);
  // The lowest joined peer silent for longer than the timeout at `now_ms`, as kPeerLost.
  // A rank that never joined is not lost here: waiting for the group to form is the
  // caller's (it knows how long a node takes to start). A rank that left is never lost.
  std::optional<Verdict> OnTick(int64_t now_ms) const;
  // `rank`'s connection closed: kPeerLost unless it left (done) or already brought its end.
  std::optional<Verdict> OnClosed(uint16_t rank);
  bool AllJoined() const;
  // The lowest peer that has not joined, if any.
  std::optional<uint16_t> FirstMissing() const;
  // Every peer joined and then left (done) or ended (its verdict came).
  bool AllLeft() const;
  // The longest wait, in ms, between two messages heard from one peer over the whole run:
  // how near the heartbeats came to the timeout (0 before any peer was heard twice).
  int64_t longest_silence_ms() const { return longest_silence_ms_; }

 private:
  std::vector<std::optional<int64_t>> last_heard_ms_;
  std::vector<bool> left_;  // done, or its end (memory, failure) already reported
  uint16_t self_rank_;
  int64_t timeout_ms_;
  int64_t longest_silence_ms_ = 0;
};

}  // namespace headroom::group
