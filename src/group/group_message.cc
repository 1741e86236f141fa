// Implementation notes: the layout is in group_message.h. Encoding and decoding read and
// write the bytes one field at a time (no struct overlay: no padding or endianness
// questions). The MAC is OpenSSL's one-shot HMAC() with SHA-256 and is compared with
// CRYPTO_memcmp, which takes the same time wherever the first difference is.
#include "group/group_message.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <array>

namespace headroom::group {
namespace {

constexpr std::string_view kMagic = "HRG";

void PutBig(std::string& out, uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint64_t GetBig(std::string_view in, size_t at, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value = (value << 8) | static_cast<unsigned char>(in[at + i]);
  return value;
}

std::array<unsigned char, kMacBytes> Mac(std::string_view data, std::string_view secret) {
  std::array<unsigned char, kMacBytes> mac{};
  unsigned int mac_bytes = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac.data(), &mac_bytes);
  return mac;
}

bool KnownKind(uint8_t kind) { return kind >= 1 && kind <= 7; }

// Only kEndedForMemory (and an abort for memory) carries readings, only kFailed (and an
// abort for a failure) a status, only kAbort a cause and origin, and an abort always a cause.
// A join carries a challenge and no run, a welcome both, every other kind a run alone.
Result<bool> CheckKindFields(const GroupMessage& m) {
  const bool join = m.kind == MessageKind::kJoin;
  const bool welcome = m.kind == MessageKind::kWelcome;
  if (join && m.run != 0) return Error(Msg("group message: join carries a run"));
  if (!join && m.run == 0) {
    return Error(Msg("group message: {} without a run", MessageKindName(m.kind)));
  }
  if ((join || welcome) && m.challenge == 0) {
    return Error(Msg("group message: {} without a challenge", MessageKindName(m.kind)));
  }
  if (!join && !welcome && m.challenge != 0) {
    return Error(Msg("group message: {} carries a challenge", MessageKindName(m.kind)));
  }
  const bool abort = m.kind == MessageKind::kAbort;
  if (abort && (m.cause == AbortCause::kNone || static_cast<uint8_t>(m.cause) > 3)) {
    return Error(Msg("group message: abort without a known cause"));
  }
  if (!abort && (m.cause != AbortCause::kNone || m.origin_rank != 0)) {
    return Error(Msg("group message: {} carries a cause", MessageKindName(m.kind)));
  }
  const bool memory = m.kind == MessageKind::kEndedForMemory || m.cause == AbortCause::kMemory;
  if (!memory && (m.available_bytes != 0 || m.level_bytes != 0)) {
    return Error(Msg("group message: {} carries a memory reading", MessageKindName(m.kind)));
  }
  if (memory && m.level_bytes == 0) {
    return Error(Msg("group message: {} without a level", MessageKindName(m.kind)));
  }
  const bool failed = m.kind == MessageKind::kFailed || m.cause == AbortCause::kFailed;
  if (!failed && m.status != 0) {
    return Error(Msg("group message: {} carries an exit status", MessageKindName(m.kind)));
  }
  if (m.sequence == 0) return Error(Msg("group message: sequence 0"));
  return true;
}

}  // namespace

std::string_view MessageKindName(MessageKind kind) {
  switch (kind) {
    case MessageKind::kJoin:
      return "join";
    case MessageKind::kHeartbeat:
      return "heartbeat";
    case MessageKind::kEndedForMemory:
      return "ended-for-memory";
    case MessageKind::kFailed:
      return "failed";
    case MessageKind::kAbort:
      return "abort";
    case MessageKind::kDone:
      return "done";
    case MessageKind::kWelcome:
      return "welcome";
  }
  return "unknown";
}

Result<bool> CheckSecret(std::string_view secret) {
  if (secret.size() < kMinSecretBytes) {
    return Error(Msg("group secret: shorter than {} bytes", kMinSecretBytes));
  }
  if (secret.size() > kMaxSecretBytes) {
    return Error(Msg("group secret: longer than {} bytes", kMaxSecretBytes));
  }
  return true;
}

Result<bool> CheckJobId(std::string_view job_id) {
  if (job_id.empty() || job_id.size() > kMaxJobIdBytes) {
    return Error(Msg("group job id: must be 1 to {} bytes", kMaxJobIdBytes));
  }
  for (const char c : job_id) {
    if (c < 0x21 || c > 0x7e) return Error(Msg("group job id: not printable ASCII"));
  }
  return true;
}

Result<std::string> EncodeMessage(const GroupMessage& m, std::string_view secret) {
  if (auto ok = CheckSecret(secret); !ok) return ok.error();
  if (auto ok = CheckJobId(m.job_id); !ok) return ok.error();
  if (auto ok = CheckKindFields(m); !ok) return ok.error();
  std::string out;
  out.reserve(kMaxFrameBytes);
  PutBig(out, kHeaderBytes + m.job_id.size() + kMacBytes - 2, 2);
  out.append(kMagic);
  PutBig(out, kWireVersion, 1);
  PutBig(out, static_cast<uint8_t>(m.kind), 1);
  PutBig(out, m.node_rank, 2);
  PutBig(out, m.run, 8);
  PutBig(out, m.challenge, 8);
  PutBig(out, m.sequence, 8);
  PutBig(out, m.sent_unix_ms, 8);
  PutBig(out, m.available_bytes, 8);
  PutBig(out, m.level_bytes, 8);
  PutBig(out, static_cast<uint32_t>(m.status), 4);
  PutBig(out, static_cast<uint8_t>(m.cause), 1);
  PutBig(out, m.origin_rank, 2);
  PutBig(out, m.job_id.size(), 1);
  out.append(m.job_id);
  const auto mac = Mac(out, secret);
  out.append(reinterpret_cast<const char*>(mac.data()), mac.size());
  return out;
}

Result<std::optional<size_t>> FrameLength(std::string_view buffered) {
  if (buffered.size() < 2) return std::optional<size_t>();
  const size_t total = GetBig(buffered, 0, 2) + 2;
  if (total < kMinFrameBytes || total > kMaxFrameBytes) {
    return Error(Msg("group message: frame length {} outside {}..{}", total, kMinFrameBytes,
                     kMaxFrameBytes));
  }
  return std::optional<size_t>(total);
}

Result<GroupMessage> DecodeMessage(std::string_view frame, std::string_view secret,
                                   std::string_view job_id) {
  if (auto ok = CheckSecret(secret); !ok) return ok.error();
  auto length = FrameLength(frame);
  if (!length) return length.error();
  if (!*length || **length != frame.size()) {
    return Error(
        Msg("group message: {} bytes where the length field says otherwise", frame.size()));
  }
  if (frame.substr(2, 3) != kMagic) return Error(Msg("group message: not a headroom frame"));
  if (static_cast<unsigned char>(frame[5]) != kWireVersion) {
    return Error(Msg("group message: version {}, this guard speaks {}",
                     static_cast<unsigned char>(frame[5]), kWireVersion));
  }
  const std::string_view body = frame.substr(0, frame.size() - kMacBytes);
  const auto mac = Mac(body, secret);
  if (CRYPTO_memcmp(mac.data(), frame.data() + body.size(), kMacBytes) != 0) {
    return Error(Msg("group message: authentication failed"));
  }
  // Authenticated from here on: the fields are the sender's, still checked for sense.
  const size_t id_bytes = static_cast<unsigned char>(frame[kHeaderBytes - 1]);
  if (kHeaderBytes + id_bytes != body.size()) {
    return Error(Msg("group message: job id length {} does not fit the frame", id_bytes));
  }
  const uint8_t kind = static_cast<uint8_t>(frame[6]);
  if (!KnownKind(kind)) return Error(Msg("group message: unknown kind {}", kind));
  GroupMessage m;
  m.kind = static_cast<MessageKind>(kind);
  m.node_rank = static_cast<uint16_t>(GetBig(frame, 7, 2));
  m.run = GetBig(frame, 9, 8);
  m.challenge = GetBig(frame, 17, 8);
  m.sequence = GetBig(frame, 25, 8);
  m.sent_unix_ms = GetBig(frame, 33, 8);
  m.available_bytes = GetBig(frame, 41, 8);
  m.level_bytes = GetBig(frame, 49, 8);
  m.status = static_cast<int32_t>(static_cast<uint32_t>(GetBig(frame, 57, 4)));
  m.cause = static_cast<AbortCause>(static_cast<uint8_t>(frame[61]));
  m.origin_rank = static_cast<uint16_t>(GetBig(frame, 62, 2));
  m.job_id = std::string(frame.substr(kHeaderBytes, id_bytes));
  if (auto ok = CheckJobId(m.job_id); !ok) return ok.error();
  if (m.job_id != job_id) return Error(Msg("group message: for another job"));
  if (auto ok = CheckKindFields(m); !ok) return ok.error();
  return m;
}

Result<bool> FrameReader::Feed(std::string_view bytes, std::vector<std::string>& frames) {
  if (failed_) return Error(Msg("group message: the stream broke earlier"));
  while (!bytes.empty()) {
    // Take only what completes the current frame, so the buffer never exceeds one frame.
    size_t want = 2;
    if (buffer_.size() >= 2) {
      auto length = FrameLength(buffer_);
      if (!length) {
        failed_ = true;
        buffer_.clear();
        return length.error();
      }
      want = **length;
    }
    const size_t take = std::min(want - buffer_.size(), bytes.size());
    buffer_.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
    if (buffer_.size() == want && want > 2) {
      frames.push_back(std::move(buffer_));
      buffer_.clear();
    }
  }
  if (buffer_.size() == 2) {  // a length alone: check it now rather than on the next call
    if (auto length = FrameLength(buffer_); !length) {
      failed_ = true;
      buffer_.clear();
      return length.error();
    }
  }
  return true;
}

ReplayGuard::ReplayGuard(uint16_t nodes, uint64_t window_ms)
    : last_sequence_(nodes, 0), window_ms_(window_ms) {}

Result<bool> ReplayGuard::InWindow(const GroupMessage& m, uint64_t now_unix_ms) const {
  if (m.node_rank >= last_sequence_.size()) {
    return Error(
        Msg("group message: node rank {} of {} nodes", m.node_rank, last_sequence_.size()));
  }
  const uint64_t skew =
      m.sent_unix_ms > now_unix_ms ? m.sent_unix_ms - now_unix_ms : now_unix_ms - m.sent_unix_ms;
  if (skew > window_ms_) {
    return Error(
        Msg("group message: sent {} ms from now, outside the {} ms window", skew, window_ms_));
  }
  return true;
}

Result<bool> ReplayGuard::Accept(const GroupMessage& m, uint64_t now_unix_ms) {
  if (auto ok = InWindow(m, now_unix_ms); !ok) return ok.error();
  if (m.sequence <= last_sequence_[m.node_rank]) {
    return Error(Msg("group message: replayed sequence {} from node {}", m.sequence, m.node_rank));
  }
  last_sequence_[m.node_rank] = m.sequence;
  return true;
}

}  // namespace headroom::group
