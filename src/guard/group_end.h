// Why the guard group ended this node's job (docs/guard-group.md "What ends the group"), as
// the guard loop records it: its own header, so that the group (guard/guard_group.h) and the
// guard (guard/guard.h) share the record without including each other.
#pragma once

#include <cstdint>
#include <string_view>

namespace headroom {

// The origin node's guard ended its job for memory (its reading and level), its job failed
// (its status), or it was lost (silent past the heartbeat timeout, its connection closed, or
// it never joined).
struct GroupEnd {
  enum class Cause { kPeerMemory, kPeerFailed, kPeerLost };
  Cause cause = Cause::kPeerLost;
  uint16_t origin_rank = 0;
  uint64_t available_bytes = 0;
  uint64_t level_bytes = 0;
  int status = 0;
  bool relayed = false;  // heard in rank 0's abort (else seen by this guard itself)
  int error_files = 0;   // torchelastic error files written for the workers
  int workers = 0;       // torchrun workers signalled first (0: the whole tree at once)
  double verdict_s = 0;  // monotonic: when the verdict came
};

// The cause's word in events and the journal: "peer-memory", "peer-failed", "peer-lost".
std::string_view GroupEndCauseName(GroupEnd::Cause cause);

}  // namespace headroom
