// The guard group's wire message (docs/guard-group.md "The channel"): one fixed-layout binary
// frame per message, authenticated with HMAC-SHA256 under the job's secret.
//
// Frame, all integers big-endian:
//   u16 length (bytes after this field)  "HRG" magic  u8 version  u8 kind  u16 node rank
//   u64 run  u64 challenge
//   u64 sequence  u64 sent (Unix ms)  u64 available bytes  u64 level bytes  i32 status
//   u8 cause  u16 origin rank  u8 job id length  job id (1..64 printable ASCII bytes)
//   32-byte HMAC-SHA256
// The MAC covers every byte before it, the length prefix included. A frame is 98..161 bytes.
// Version 2 added the cause and origin: an abort says which node ended the group and why, so
// every node can name the root cause. Version 3 added the run and the challenge: the
// coordinator makes a random run nonce at start and gives it in its signed welcome, which
// answers a join and echoes the join's random challenge; every later frame carries the run,
// so a frame from an earlier run of the same job (same secret) is refused. Older versions
// are refused.
//
// The decoder checks the length, the magic and the version, then the MAC (in constant time)
// before it reads any other field, so an unauthenticated frame is refused without its
// contents being looked at. Replays are refused by ReplayGuard: per node rank, a sequence
// must exceed the last accepted one, and the send time must lie within a window of now.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace headroom::group {

enum class MessageKind : uint8_t {
  kJoin = 1,            // a member announces itself to the coordinator
  kHeartbeat = 2,       // a member is alive
  kEndedForMemory = 3,  // the sender's guard ended its job for memory (reading, level)
  kFailed = 4,          // the sender's job exited with a failure (status)
  kAbort = 5,           // the coordinator tells every member to end its job (cause, origin)
  kDone = 6,            // the sender's job exited 0: it leaves the group, not lost
  kWelcome = 7,         // the coordinator answers a join: the run nonce, the join's challenge
};

// Why the coordinator ends the group (an abort's cause): the origin node's guard ended its
// job for memory (the abort carries its reading and level), its job failed (the status), or
// it was lost (silent past the heartbeat timeout, or its connection closed).
enum class AbortCause : uint8_t {
  kNone = 0,  // every other kind
  kMemory = 1,
  kFailed = 2,
  kLost = 3,
};

// The English name of a kind, as written in events and the journal.
std::string_view MessageKindName(MessageKind kind);

inline constexpr uint8_t kWireVersion = 3;
inline constexpr size_t kMaxJobIdBytes = 64;
inline constexpr size_t kMacBytes = 32;  // HMAC-SHA256
// A shorter secret is refused: 16 bytes is 128 bits, HMAC-SHA256's security level needs no
// more, and a typed passphrase shorter than that is guessable offline from one frame.
inline constexpr size_t kMinSecretBytes = 16;
inline constexpr size_t kMaxSecretBytes = 4096;
inline constexpr size_t kHeaderBytes =
    2 + 3 + 1 + 1 + 2 + 8 + 8 + 8 + 8 + 8 + 8 + 4 + 1 + 2 + 1;  // 65
inline constexpr size_t kMinFrameBytes = kHeaderBytes + 1 + kMacBytes;
inline constexpr size_t kMaxFrameBytes = kHeaderBytes + kMaxJobIdBytes + kMacBytes;

struct GroupMessage {
  std::string job_id;
  uint16_t node_rank = 0;
  // The run's nonce, made by the coordinator at start: 0 in a join (the member does not know
  // it yet), never 0 in any other kind.
  uint64_t run = 0;
  // A join's random challenge, echoed by the welcome that answers it; 0 in every other kind.
  uint64_t challenge = 0;
  uint64_t sequence = 0;  // starts at 1 for each sender; 0 is never valid
  uint64_t sent_unix_ms = 0;
  MessageKind kind = MessageKind::kHeartbeat;
  // kEndedForMemory (and an abort for memory): the reading that ended the job and the level
  // it fell under; 0 otherwise.
  uint64_t available_bytes = 0;
  uint64_t level_bytes = 0;
  // kFailed (and an abort for a failure): the job's exit status (a signal as 128 + number).
  int32_t status = 0;
  // kAbort only: why, and which node's end it passes on; kNone and 0 otherwise.
  AbortCause cause = AbortCause::kNone;
  uint16_t origin_rank = 0;

  bool operator==(const GroupMessage&) const = default;
};

// Refuses a secret shorter than kMinSecretBytes or longer than kMaxSecretBytes.
Result<bool> CheckSecret(std::string_view secret);
// Refuses a job id that is empty, over kMaxJobIdBytes, or not printable ASCII.
Result<bool> CheckJobId(std::string_view job_id);

// The frame for `message`, or an error when its job id or kind-specific fields are invalid.
Result<std::string> EncodeMessage(const GroupMessage& message, std::string_view secret);

// How long the frame at the front of `buffered` is, length prefix included: nullopt while
// fewer than 2 bytes are there, an error when the length is out of bounds (the stream is
// then unusable and the connection is to be closed).
Result<std::optional<size_t>> FrameLength(std::string_view buffered);

// Decodes exactly one frame. Refuses a wrong length, magic, version or MAC, a job id other
// than `job_id`, an unknown kind, and fields that do not belong to the kind.
Result<GroupMessage> DecodeMessage(std::string_view frame, std::string_view secret,
                                   std::string_view job_id);

// A connection's bytes cut into frames, holding at most one frame (kMaxFrameBytes): the
// per-connection memory bound of the channel. After a bad length the reader stays failed
// and the connection is to be closed.
class FrameReader {
 public:
  // Appends `bytes`; the complete frames go to `frames` (still to be decoded). An error on
  // an out-of-bounds length, now and on every later call.
  Result<bool> Feed(std::string_view bytes, std::vector<std::string>& frames);
  size_t buffered() const { return buffer_.size(); }

 private:
  std::string buffer_;
  bool failed_ = false;
};

// Replay protection for authenticated messages from `nodes` node ranks.
class ReplayGuard {
 public:
  ReplayGuard(uint16_t nodes, uint64_t window_ms);
  // Accepts `message` (and remembers its sequence) or says why not: a rank out of range, a
  // sequence not above the last accepted from that rank, a send time outside the window.
  Result<bool> Accept(const GroupMessage& message, uint64_t now_unix_ms);
  // The rank and window checks alone, nothing remembered: for a join, which comes before the
  // run is known (what binds a member to the run is the frame after the welcome).
  Result<bool> InWindow(const GroupMessage& message, uint64_t now_unix_ms) const;

 private:
  std::vector<uint64_t> last_sequence_;
  uint64_t window_ms_;
};

}  // namespace headroom::group
