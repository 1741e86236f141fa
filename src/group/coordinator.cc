// Implementation notes: level-triggered epoll; each readable connection is read until
// EAGAIN in 4 KiB chunks. A connection is closed on EOF, on a read error, and on a frame the
// decoder or the replay guard refuses (one bad frame and the peer is not trusted again). A
// connection that an authenticated member spoke on and that closes before the member left
// (done) is that member lost at once: a guard killed with SIGKILL takes its job with it
// (PR_SET_PDEATHSIG).
// A connection is authenticated (a member) once, after the welcome that answered its join,
// a frame of this run came from the rank that joined (docs/guard-group.md "The handshake").
// Two budgets: connections not yet authenticated (strangers) have their own (StrangerBudget)
// and a handshake deadline; past the budget the oldest stranger is closed, never a member and
// never the newest (a member connecting past idle strangers is the newest). Authenticated
// connections have a cap of twice the node count: a member that reconnects may briefly hold
// two, and nothing else can authenticate.
// At the descriptor limit accept4 fails (EMFILE) and the connection stays in the listener,
// which level-triggered epoll then reports at every wait: a busy loop. So the coordinator
// keeps one reserve descriptor: it closes it, takes the connection and closes that, and opens
// the reserve again (libev's remedy); and it takes the listener out of its epoll set (nginx's)
// for kAcceptPauseMs, so even without the reserve the loop never spins.
#include "group/coordinator.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <vector>

#include "group/group_secret.h"
#include "group/member.h"

namespace headroom::group {

size_t StrangerBudget(uint16_t nodes) { return std::min<size_t>(2u * nodes, 64); }

namespace {

// How long the listener rests after accept4 found no descriptor: at most four attempts a
// second. The guard's loop calls Poll at least every heartbeat period, which bounds how late
// the listener comes back; connections that arrive meanwhile wait in its backlog.
constexpr int64_t kAcceptPauseMs = 250;

}  // namespace

Coordinator::Coordinator(const CoordinatorSettings& settings)
    : settings_(settings),
      replay_(settings.nodes, settings.replay_window_ms),
      membership_(settings.nodes, 0, settings.heartbeat_timeout_ms) {}

Result<std::unique_ptr<Coordinator>> Coordinator::Listen(const CoordinatorSettings& settings) {
  if (auto ok = CheckSecret(settings.secret); !ok) return ok.error();
  if (auto ok = CheckJobId(settings.job_id); !ok) return ok.error();
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(settings.port);
  if (inet_pton(AF_INET, settings.host.c_str(), &address.sin_addr) != 1) {
    return Error(Msg("--group: {}: not a numeric IPv4 address", settings.host));
  }
  std::unique_ptr<Coordinator> c(new Coordinator(settings));
  auto run = RandomNonce();
  if (!run) return run.error();
  c->run_ = *run;
  c->listener_.reset(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (c->listener_.get() < 0) return ErrnoError(Msg("socket(AF_INET)"));
  const int one = 1;
  setsockopt(c->listener_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(c->listener_.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    return ErrnoError(Msg("bind({}:{})", settings.host, settings.port));
  }
  if (listen(c->listener_.get(), 16) != 0) return ErrnoError(Msg("listen({})", settings.host));
  socklen_t length = sizeof address;
  getsockname(c->listener_.get(), reinterpret_cast<sockaddr*>(&address), &length);
  c->port_ = ntohs(address.sin_port);
  c->epoll_.reset(epoll_create1(EPOLL_CLOEXEC));
  if (c->epoll_.get() < 0) return ErrnoError(Msg("epoll_create1"));
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = c->listener_.get();
  if (epoll_ctl(c->epoll_.get(), EPOLL_CTL_ADD, c->listener_.get(), &event) != 0) {
    return ErrnoError(Msg("epoll_ctl(listener)"));
  }
  c->reserve_.reset(eventfd(0, EFD_CLOEXEC));  // none (-1) at the limit already: pause only
  return c;
}

Coordinator::~Coordinator() {
  for (const auto& [fd, connection] : connections_) close(fd);
}

size_t Coordinator::strangers() const {
  return static_cast<size_t>(std::count_if(connections_.begin(), connections_.end(),
                                           [](const auto& c) { return !c.second.member; }));
}

void Coordinator::Accept(int64_t now_ms) {
  for (;;) {
    const int fd = accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0 && errno == EINTR) continue;
    if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)) {
      AtTheLimit(now_ms);
      return;
    }
    if (fd < 0) return;  // EAGAIN, or a connection that went away before we took it
    epoll_event event{};
    event.events = EPOLLIN | EPOLLRDHUP;
    event.data.fd = fd;
    if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &event) != 0) {
      close(fd);
      continue;
    }
    Connection connection;
    connection.accepted_ms = now_ms;
    connection.serial = ++accepted_;
    connections_.emplace(fd, std::move(connection));
    DropStrangers(now_ms);
  }
}

void Coordinator::AtTheLimit(int64_t now_ms) {
  ++refused_;
  if (reserve_.get() >= 0) {
    reserve_.reset();
    const int fd = accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) close(fd);
    reserve_.reset(eventfd(0, EFD_CLOEXEC));
  }
  WatchListener(false);
  paused_until_ms_ = now_ms + kAcceptPauseMs;
}

void Coordinator::WatchListener(bool watch) {
  epoll_event event{};
  event.events = watch ? static_cast<uint32_t>(EPOLLIN) : 0u;
  event.data.fd = listener_.get();
  epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, listener_.get(), &event);
}

void Coordinator::DropStrangers(int64_t now_ms) {
  std::vector<int> late;
  for (const auto& [fd, c] : connections_) {
    if (!c.member && now_ms - c.accepted_ms >= settings_.handshake_timeout_ms) late.push_back(fd);
  }
  for (const int fd : late) {
    (void)Close(fd);
    ++refused_;
  }
  for (size_t held = strangers(); held > StrangerBudget(settings_.nodes); --held) {
    auto oldest = connections_.end();
    for (auto it = connections_.begin(); it != connections_.end(); ++it) {
      if (!it->second.member &&
          (oldest == connections_.end() || it->second.serial < oldest->second.serial)) {
        oldest = it;
      }
    }
    (void)Close(oldest->first);
    ++refused_;
  }
}

std::optional<Verdict> Coordinator::Close(int fd) {
  epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
  close(fd);
  const auto it = connections_.find(fd);
  if (it == connections_.end()) return std::nullopt;
  const std::optional<uint16_t> rank = it->second.rank;
  const bool member = it->second.member;
  connections_.erase(it);
  return member ? membership_.OnClosed(*rank) : std::nullopt;
}

std::optional<Verdict> Coordinator::Read(int fd, int64_t now_ms, uint64_t now_unix_ms) {
  std::optional<Verdict> verdict;
  std::array<char, 4096> chunk{};
  for (;;) {
    const ssize_t n = read(fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return verdict;
    const auto closed = [&] {
      if (auto v = Close(fd); v && !verdict) verdict = v;
      return verdict;
    };
    if (n <= 0) return closed();
    std::vector<std::string> frames;
    Connection& connection = connections_.at(fd);
    const bool stream_ok =
        connection.reader.Feed(std::string_view(chunk.data(), static_cast<size_t>(n)), frames).ok();
    for (const std::string& frame : frames) {
      auto message = DecodeMessage(frame, settings_.secret, settings_.job_id);
      // A member speaks for one rank, and never for rank 0's.
      if (!message || message->node_rank == 0) {
        ++refused_;
        return closed();
      }
      if (!connection.rank) {  // a stranger's first frame: a join, answered with the welcome
        if (message->kind != MessageKind::kJoin || !replay_.InWindow(*message, now_unix_ms) ||
            !Welcome(fd, *message, now_unix_ms)) {
          ++refused_;
          return closed();
        }
        connection.rank = message->node_rank;
        continue;
      }
      // After the welcome: frames of this run only, from the rank that joined, in sequence.
      if (message->run != run_ || *connection.rank != message->node_rank ||
          message->kind == MessageKind::kJoin || message->kind == MessageKind::kWelcome ||
          !replay_.Accept(*message, now_unix_ms) ||
          (!connection.member && members() >= 2u * settings_.nodes)) {  // the members' cap
        ++refused_;
        return closed();
      }
      connection.member = true;
      if (auto v = membership_.OnMessage(*message, now_ms); v && !verdict) verdict = v;
    }
    if (!stream_ok) {
      ++refused_;
      return closed();
    }
  }
}

std::optional<Verdict> Coordinator::Poll(int timeout_ms, int64_t now_ms, uint64_t now_unix_ms) {
  if (paused_until_ms_ && now_ms >= *paused_until_ms_) {
    paused_until_ms_.reset();
    WatchListener(true);
  }
  std::array<epoll_event, 16> events{};
  const int n = epoll_wait(epoll_.get(), events.data(), events.size(), timeout_ms);
  std::optional<Verdict> verdict;
  for (int i = 0; i < n; ++i) {
    const int fd = events[i].data.fd;
    if (fd == listener_.get()) {
      Accept(now_ms);
    } else if (connections_.count(fd)) {
      if (auto v = Read(fd, now_ms, now_unix_ms); v && !verdict) verdict = v;
    }
  }
  DropStrangers(now_ms);
  if (!verdict) verdict = membership_.OnTick(now_ms);
  return verdict;
}

}  // namespace headroom::group

namespace headroom::group {

void Coordinator::Broadcast(MessageKind kind, uint64_t now_unix_ms) {
  GroupMessage m;
  m.job_id = settings_.job_id;
  m.node_rank = 0;
  m.run = run_;
  m.sequence = ++sequence_;
  m.sent_unix_ms = now_unix_ms;
  m.kind = kind;
  Send(m);
}

void Coordinator::BroadcastAbort(const Verdict& why, uint64_t now_unix_ms) {
  GroupMessage m;
  m.job_id = settings_.job_id;
  m.node_rank = 0;
  m.run = run_;
  m.sequence = ++sequence_;
  m.sent_unix_ms = now_unix_ms;
  m.kind = MessageKind::kAbort;
  m.origin_rank = why.node_rank;
  switch (why.kind) {
    case VerdictKind::kPeerEndedForMemory:
      m.cause = AbortCause::kMemory;
      m.available_bytes = why.available_bytes;
      m.level_bytes = why.level_bytes;
      break;
    case VerdictKind::kPeerFailed:
      m.cause = AbortCause::kFailed;
      m.status = why.status;
      break;
    case VerdictKind::kPeerLost:
      m.cause = AbortCause::kLost;
      break;
  }
  Send(m);
}

bool Coordinator::Welcome(int fd, const GroupMessage& join, uint64_t now_unix_ms) {
  GroupMessage m;
  m.job_id = settings_.job_id;
  m.node_rank = 0;
  m.run = run_;
  m.challenge = join.challenge;
  m.sequence = ++sequence_;
  m.sent_unix_ms = now_unix_ms;
  m.kind = MessageKind::kWelcome;
  auto frame = EncodeMessage(m, settings_.secret);
  return frame && SendFrame(fd, *frame);
}

void Coordinator::Send(const GroupMessage& m) {
  auto frame = EncodeMessage(m, settings_.secret);
  if (!frame) return;
  std::vector<int> broken;
  // Nothing to a connection that has not authenticated: a stranger that only listens would
  // collect signed frames to replay.
  for (const auto& [fd, connection] : connections_) {
    if (connection.member && !SendFrame(fd, *frame)) broken.push_back(fd);
  }
  for (const int fd : broken) (void)Close(fd);
}

}  // namespace headroom::group
