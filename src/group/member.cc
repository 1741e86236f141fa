// Implementation notes: the member hears only from rank 0, so its Membership tracks rank 0
// alone: the coordinator's heartbeats (Coordinator::Broadcast) keep it alive, and silence
// past the timeout is "peer lost" as on the coordinator's side.
#include "group/member.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <vector>

namespace headroom::group {

Result<bool> SendFrame(int fd, const std::string& frame) {
  const ssize_t n = send(fd, frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n < 0) return ErrnoError(Msg("send(group frame)"));
  if (static_cast<size_t>(n) != frame.size()) return Error(Msg("send(group frame): short write"));
  return true;
}

namespace {

// A non-blocking connect on `fd`, waited for at most `timeout_ms`: 0 once connected, else the
// errno (ETIMEDOUT when the time ran out with no answer).
int ConnectWithin(int fd, const sockaddr_in& address, int64_t timeout_ms) {
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) return 0;
  if (errno != EINPROGRESS) return errno;
  pollfd p{fd, POLLOUT, 0};
  const int timeout = static_cast<int>(std::clamp<int64_t>(timeout_ms, 1, 600'000));
  int n;
  do {
    n = poll(&p, 1, timeout);  // an EINTR restarts the wait; the caller's loop bounds the rest
  } while (n < 0 && errno == EINTR);
  if (n < 0) return errno;
  if (n == 0) return ETIMEDOUT;
  int error = 0;
  socklen_t size = sizeof error;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) != 0) return errno;
  return error;
}

}  // namespace

Member::Member(const MemberSettings& settings)
    : settings_(settings),
      replay_(settings.nodes, settings.replay_window_ms),
      membership_(settings.nodes, settings.node_rank, settings.heartbeat_timeout_ms) {}

Result<std::unique_ptr<Member>> Member::Connect(const MemberSettings& settings, int64_t now_ms,
                                                uint64_t now_unix_ms) {
  if (auto ok = CheckSecret(settings.secret); !ok) return ok.error();
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(settings.port);
  if (inet_pton(AF_INET, settings.host.c_str(), &address.sin_addr) != 1) {
    return Error(Msg("--group: {}: not a numeric IPv4 address", settings.host));
  }
  std::unique_ptr<Member> m(new Member(settings));
  m->socket_.reset(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (m->socket_.get() < 0) return ErrnoError(Msg("socket(AF_INET)"));
  if (const int error = ConnectWithin(m->socket_.get(), address, settings.connect_timeout_ms)) {
    return ErrnoError(Msg("connect({}:{})", settings.host, settings.port), error);
  }
  if (auto ok = m->Send(MessageKind::kJoin, now_unix_ms); !ok) return ok.error();
  m->last_sent_ms_ = now_ms;
  // The coordinator counts as heard at connect: its silence from here on is what loses it.
  GroupMessage hello;
  hello.node_rank = 0;
  hello.kind = MessageKind::kHeartbeat;
  (void)m->membership_.OnMessage(hello, now_ms);
  return m;
}

Result<bool> Member::Send(MessageKind kind, uint64_t now_unix_ms, uint64_t available_bytes,
                          uint64_t level_bytes, int32_t status) {
  GroupMessage m;
  m.job_id = settings_.job_id;
  m.node_rank = settings_.node_rank;
  m.sequence = ++sequence_;
  m.sent_unix_ms = now_unix_ms;
  m.kind = kind;
  m.available_bytes = available_bytes;
  m.level_bytes = level_bytes;
  m.status = status;
  auto frame = EncodeMessage(m, settings_.secret);
  if (!frame) return frame.error();
  return SendFrame(socket_.get(), *frame);
}

std::optional<Verdict> Member::Poll(int timeout_ms, int64_t now_ms, uint64_t now_unix_ms) {
  const Verdict lost{VerdictKind::kPeerLost, 0, 0, 0, 0};
  if (broken_) return lost;
  if (now_ms - last_sent_ms_ >= settings_.heartbeat_ms) {
    if (!Send(MessageKind::kHeartbeat, now_unix_ms)) broken_ = true;
    last_sent_ms_ = now_ms;
  }
  pollfd p{socket_.get(), POLLIN, 0};
  if (!broken_ && poll(&p, 1, timeout_ms) > 0) {
    std::array<char, 4096> chunk{};
    const ssize_t n = read(socket_.get(), chunk.data(), chunk.size());
    std::vector<std::string> frames;
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) ||
        (n > 0 && !reader_.Feed(std::string_view(chunk.data(), static_cast<size_t>(n)), frames))) {
      broken_ = true;
    }
    for (const std::string& frame : frames) {
      auto message = DecodeMessage(frame, settings_.secret, settings_.job_id);
      if (!message || message->node_rank != 0 || !replay_.Accept(*message, now_unix_ms)) {
        broken_ = true;  // only the coordinator speaks to a member
        break;
      }
      if (auto v = membership_.OnMessage(*message, now_ms)) return v;
    }
  }
  if (broken_) return lost;
  return membership_.OnTick(now_ms);
}

}  // namespace headroom::group
