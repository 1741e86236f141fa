#include "group/membership.h"

namespace headroom::group {

Membership::Membership(uint16_t nodes, uint16_t self_rank, int64_t heartbeat_timeout_ms)
    : last_heard_ms_(nodes), self_rank_(self_rank), timeout_ms_(heartbeat_timeout_ms) {}

std::optional<Verdict> Membership::OnMessage(const GroupMessage& m, int64_t now_ms) {
  if (m.node_rank >= last_heard_ms_.size() || m.node_rank == self_rank_) return std::nullopt;
  last_heard_ms_[m.node_rank] = now_ms;
  switch (m.kind) {
    case MessageKind::kJoin:
    case MessageKind::kHeartbeat:
      return std::nullopt;
    case MessageKind::kEndedForMemory:
      return Verdict{VerdictKind::kPeerEndedForMemory, m.node_rank, m.available_bytes,
                     m.level_bytes, 0};
    case MessageKind::kFailed:
      return Verdict{VerdictKind::kPeerFailed, m.node_rank, 0, 0, m.status};
    case MessageKind::kAbort:
      return Verdict{VerdictKind::kAborted, m.node_rank, 0, 0, 0};
  }
  return std::nullopt;
}

std::optional<Verdict> Membership::OnTick(int64_t now_ms) const {
  for (size_t rank = 0; rank < last_heard_ms_.size(); ++rank) {
    const auto& heard = last_heard_ms_[rank];
    if (rank != self_rank_ && heard && now_ms - *heard > timeout_ms_) {
      return Verdict{VerdictKind::kPeerLost, static_cast<uint16_t>(rank), 0, 0, 0};
    }
  }
  return std::nullopt;
}

bool Membership::AllJoined() const {
  for (size_t rank = 0; rank < last_heard_ms_.size(); ++rank) {
    if (rank != self_rank_ && !last_heard_ms_[rank]) return false;
  }
  return true;
}

}  // namespace headroom::group
