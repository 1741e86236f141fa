#include "group/membership.h"

#include <algorithm>

namespace headroom::group {

Membership::Membership(uint16_t nodes, uint16_t self_rank, int64_t heartbeat_timeout_ms)
    : last_heard_ms_(nodes),
      left_(nodes, false),
      self_rank_(self_rank),
      timeout_ms_(heartbeat_timeout_ms) {}

std::optional<Verdict> Membership::OnMessage(const GroupMessage& m, int64_t now_ms) {
  if (m.node_rank >= last_heard_ms_.size() || m.node_rank == self_rank_) return std::nullopt;
  if (const auto last = last_heard_ms_[m.node_rank]) {
    longest_silence_ms_ = std::max(longest_silence_ms_, now_ms - *last);
  }
  last_heard_ms_[m.node_rank] = now_ms;
  switch (m.kind) {
    case MessageKind::kJoin:
    case MessageKind::kWelcome:
    case MessageKind::kHeartbeat:
      return std::nullopt;
    case MessageKind::kDone:
      left_[m.node_rank] = true;
      return std::nullopt;
    case MessageKind::kEndedForMemory:
      left_[m.node_rank] = true;
      return Verdict{VerdictKind::kPeerEndedForMemory, m.node_rank, m.available_bytes,
                     m.level_bytes, 0};
    case MessageKind::kFailed:
      left_[m.node_rank] = true;
      return Verdict{VerdictKind::kPeerFailed, m.node_rank, 0, 0, m.status};
    case MessageKind::kAbort: {
      const VerdictKind kind = m.cause == AbortCause::kMemory   ? VerdictKind::kPeerEndedForMemory
                               : m.cause == AbortCause::kFailed ? VerdictKind::kPeerFailed
                                                                : VerdictKind::kPeerLost;
      return Verdict{kind, m.origin_rank, m.available_bytes, m.level_bytes, m.status, true};
    }
  }
  return std::nullopt;
}

std::optional<Verdict> Membership::OnTick(int64_t now_ms) const {
  for (size_t rank = 0; rank < last_heard_ms_.size(); ++rank) {
    const auto& heard = last_heard_ms_[rank];
    if (rank != self_rank_ && heard && !left_[rank] && now_ms - *heard > timeout_ms_) {
      return Verdict{VerdictKind::kPeerLost, static_cast<uint16_t>(rank), 0, 0, 0};
    }
  }
  return std::nullopt;
}

std::optional<Verdict> Membership::OnClosed(uint16_t rank) {
  if (rank >= left_.size() || rank == self_rank_ || left_[rank]) return std::nullopt;
  left_[rank] = true;
  return Verdict{VerdictKind::kPeerLost, rank, 0, 0, 0};
}

std::optional<uint16_t> Membership::FirstMissing() const {
  for (size_t rank = 0; rank < last_heard_ms_.size(); ++rank) {
    if (rank != self_rank_ && !last_heard_ms_[rank]) return static_cast<uint16_t>(rank);
  }
  return std::nullopt;
}

bool Membership::AllLeft() const {
  for (size_t rank = 0; rank < left_.size(); ++rank) {
    if (rank != self_rank_ && !left_[rank]) return false;
  }
  return true;
}

bool Membership::AllJoined() const {
  for (size_t rank = 0; rank < last_heard_ms_.size(); ++rank) {
    if (rank != self_rank_ && !last_heard_ms_[rank]) return false;
  }
  return true;
}

}  // namespace headroom::group
