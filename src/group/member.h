// A member's end of the guard group's channel (docs/guard-group.md "Members"): one TCP
// connection to the coordinator, a join on connect (with a random challenge), the
// coordinator's signed welcome awaited (the run's nonce, the challenge echoed: only then is
// this node joined), a heartbeat every period, reports sent when this node's job ends, and
// the coordinator's frames read back (abort, heartbeats), each bound to the run.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/result.h"
#include "base/safe_file.h"
#include "group/group_message.h"
#include "group/membership.h"

namespace headroom::group {

struct MemberSettings {
  std::string host;  // the coordinator's numeric IPv4 address
  uint16_t port = 0;
  std::string job_id;
  std::string secret;
  uint16_t node_rank = 1;
  uint16_t nodes = 2;
  int64_t heartbeat_ms = 0;
  int64_t heartbeat_timeout_ms = 0;
  uint64_t replay_window_ms = 30'000;
  // How long one connect may wait for the coordinator's answer (its SYN-ACK), in ms. The
  // kernel's own timeout is minutes; a guard waiting to form its group must not block past
  // its --group-wait on one attempt.
  int64_t connect_timeout_ms = 3'000;
};

class Member {
 public:
  // Connects (waiting at most settings.connect_timeout_ms: past it, an error with
  // ETIMEDOUT), sends the join. Not joined yet: see AwaitWelcome.
  static Result<std::unique_ptr<Member>> Connect(const MemberSettings& settings, int64_t now_ms,
                                                 uint64_t now_unix_ms);
  // Waits up to `timeout_ms` for the coordinator's welcome (answering it with a heartbeat of
  // the run: the coordinator's sign that this connection is a member). An error with
  // ECONNRESET when the coordinator closed the connection or sent anything else first (another
  // secret or job id, or its place went to a newer connection), ETIMEDOUT when no welcome came.
  Result<bool> AwaitWelcome(int timeout_ms, int64_t now_ms, uint64_t now_unix_ms);
  // The coordinator's welcome came: its run nonce is known, frames can be sent.
  bool joined() const { return run_ != 0; }
  Member(const Member&) = delete;
  Member& operator=(const Member&) = delete;

  int fd() const { return socket_.get(); }
  const Membership& membership() const {
    return membership_;
  }  // readable when the coordinator sent something
  // Sends one frame of `kind` from this node (the reading or status its kind carries), bound
  // to the run; an error before the welcome.
  Result<bool> Send(MessageKind kind, uint64_t now_unix_ms, uint64_t available_bytes = 0,
                    uint64_t level_bytes = 0, int32_t status = 0);
  // Heartbeats when the period is up, waits up to `timeout_ms` for the coordinator's frames,
  // and returns the verdict: the abort's (relayed) from the coordinator, or kPeerLost (rank 0) when
  // its connection closed, a frame from it was refused, or it was silent past the timeout.
  std::optional<Verdict> Poll(int timeout_ms, int64_t now_ms, uint64_t now_unix_ms);

 private:
  explicit Member(const MemberSettings& settings);
  Result<bool> SendMessage(GroupMessage message);
  // Reads what the coordinator sent (waiting up to `timeout_ms` for it): its verdict, if any;
  // sets broken_ on a close, an error or a frame refused.
  std::optional<Verdict> Read(int timeout_ms, int64_t now_ms, uint64_t now_unix_ms);

  MemberSettings settings_;
  FileFd socket_;
  FrameReader reader_;
  ReplayGuard replay_;
  Membership membership_;
  uint64_t sequence_ = 0;
  uint64_t challenge_ = 0;  // the join's
  uint64_t run_ = 0;        // from the welcome
  int64_t last_sent_ms_ = 0;
  bool broken_ = false;
};

// Writes one whole frame to non-blocking socket `fd` (MSG_NOSIGNAL: a closed peer is an
// error, not a SIGPIPE). A frame is at most 161 bytes, so a short write means a peer that
// stopped reading: an error, the connection to be closed.
Result<bool> SendFrame(int fd, const std::string& frame);

}  // namespace headroom::group
