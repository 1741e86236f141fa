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
#include <chrono>
#include <vector>

#include "group/group_secret.h"

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
  auto challenge = RandomNonce();
  if (!challenge) return challenge.error();
  m->challenge_ = *challenge;
  m->socket_.reset(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (m->socket_.get() < 0) return ErrnoError(Msg("socket(AF_INET)"));
  if (const int error = ConnectWithin(m->socket_.get(), address, settings.connect_timeout_ms)) {
    return ErrnoError(Msg("connect({}:{})", settings.host, settings.port), error);
  }
  GroupMessage join;
  join.kind = MessageKind::kJoin;
  join.challenge = m->challenge_;
  join.sent_unix_ms = now_unix_ms;
  if (auto ok = m->SendMessage(join); !ok) return ok.error();
  m->last_sent_ms_ = now_ms;
  // The coordinator counts as heard at connect: its silence from here on is what loses it.
  GroupMessage hello;
  hello.node_rank = 0;
  hello.kind = MessageKind::kHeartbeat;
  (void)m->membership_.OnMessage(hello, now_ms);
  return m;
}

Result<bool> Member::SendMessage(GroupMessage m) {
  m.job_id = settings_.job_id;
  m.node_rank = settings_.node_rank;
  m.sequence = ++sequence_;
  auto frame = EncodeMessage(m, settings_.secret);
  if (!frame) return frame.error();
  return SendFrame(socket_.get(), *frame);
}

Result<bool> Member::Send(MessageKind kind, uint64_t now_unix_ms, uint64_t available_bytes,
                          uint64_t level_bytes, int32_t status) {
  if (!joined()) return Error(Msg("group: not joined: no welcome from node rank 0 yet"));
  GroupMessage m;
  m.run = run_;
  m.sent_unix_ms = now_unix_ms;
  m.kind = kind;
  m.available_bytes = available_bytes;
  m.level_bytes = level_bytes;
  m.status = status;
  return SendMessage(m);
}

Result<bool> Member::AwaitWelcome(int timeout_ms, int64_t now_ms, uint64_t now_unix_ms) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    if (joined()) return true;
    if (broken_) {
      return Error{Msg("node rank 0 closed the connection before its welcome (another secret or "
                       "job id?)"),
                   ECONNRESET};
    }
    const int64_t waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::steady_clock::now() - start)
                               .count();
    if (waited >= timeout_ms) {
      return Error{Msg("no welcome from node rank 0 within {} ms", timeout_ms), ETIMEDOUT};
    }
    (void)Read(static_cast<int>(timeout_ms - waited), now_ms + waited,
               now_unix_ms + static_cast<uint64_t>(waited));
  }
}

std::optional<Verdict> Member::Read(int timeout_ms, int64_t now_ms, uint64_t now_unix_ms) {
  pollfd p{socket_.get(), POLLIN, 0};
  if (broken_ || poll(&p, 1, timeout_ms) <= 0) return std::nullopt;
  std::array<char, 4096> chunk{};
  const ssize_t n = read(socket_.get(), chunk.data(), chunk.size());
  std::vector<std::string> frames;
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) ||
      (n > 0 && !reader_.Feed(std::string_view(chunk.data(), static_cast<size_t>(n)), frames))) {
    broken_ = true;
  }
  for (const std::string& frame : frames) {
    auto message = DecodeMessage(frame, settings_.secret, settings_.job_id);
    // Only the coordinator speaks to a member: first its welcome, answering this join's
    // challenge, then frames of the run the welcome named.
    const bool welcome = message && message->kind == MessageKind::kWelcome;
    if (!message || message->node_rank != 0 || welcome == joined() ||
        (welcome ? message->challenge != challenge_ : message->run != run_) ||
        message->kind == MessageKind::kJoin || !replay_.Accept(*message, now_unix_ms)) {
      broken_ = true;
      break;
    }
    if (welcome) {
      run_ = message->run;
      // The first frame of the run: what makes this connection a member at the coordinator.
      if (!Send(MessageKind::kHeartbeat, now_unix_ms)) broken_ = true;
      last_sent_ms_ = now_ms;
    }
    if (auto v = membership_.OnMessage(*message, now_ms)) return v;
  }
  return std::nullopt;
}

std::optional<Verdict> Member::Poll(int timeout_ms, int64_t now_ms, uint64_t now_unix_ms) {
  const Verdict lost{VerdictKind::kPeerLost, 0, 0, 0, 0};
  if (broken_) return lost;
  if (joined() && now_ms - last_sent_ms_ >= settings_.heartbeat_ms) {
    if (!Send(MessageKind::kHeartbeat, now_unix_ms)) broken_ = true;
    last_sent_ms_ = now_ms;
  }
  if (auto v = Read(timeout_ms, now_ms, now_unix_ms)) return v;
  if (broken_) return lost;
  return membership_.OnTick(now_ms);
}

}  // namespace headroom::group
