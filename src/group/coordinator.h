// Node rank 0's end of the guard group's channel (docs/guard-group.md "The coordinator"): a
// TCP listener on the one address given, an epoll set of member connections, each cut into
// frames by its own FrameReader, each frame decoded, replay-checked and handed to the
// Membership. Non-blocking throughout; the guard loop calls Poll with its own timeout.
// The handshake: a connection's first frame must be a join; it is answered with a signed
// welcome carrying this run's nonce (made at Listen) and the join's challenge. The connection
// is a member (authenticated) once a frame bound to this run follows from the rank that
// joined; until then it is a stranger, and it gets nothing but its welcome.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "base/result.h"
#include "base/safe_file.h"
#include "group/group_message.h"
#include "group/membership.h"

namespace headroom::group {

struct CoordinatorSettings {
  std::string host;   // a numeric IPv4 address: the listener binds this one only
  uint16_t port = 0;  // 0: any free port (tests), read back with port()
  std::string job_id;
  std::string secret;
  uint16_t nodes = 2;
  int64_t heartbeat_timeout_ms = 0;
  // How long a connection may stay unauthenticated (docs/guard-group.md "The coordinator"):
  // past it, it is closed. The guard gives its heartbeat timeout (see GuardGroup::Start).
  int64_t handshake_timeout_ms = 3'000;
  uint64_t replay_window_ms = 30'000;
};

// How many unauthenticated connections the coordinator holds at once for `nodes` nodes: every
// member may connect at the same moment, and one may be reconnecting, so twice the node count,
// but at most 64 (a larger group's members that lose their place retry). Members are counted
// apart (their own cap, twice the node count), so strangers never crowd them out.
size_t StrangerBudget(uint16_t nodes);

class Coordinator {
 public:
  static Result<std::unique_ptr<Coordinator>> Listen(const CoordinatorSettings& settings);
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;
  ~Coordinator();  // closes every member connection

  uint16_t port() const { return port_; }
  // Readable when there is traffic to handle (the epoll set itself, for the guard's own
  // epoll set): then Poll(0, ...).
  int fd() const { return epoll_.get(); }
  const Membership& membership() const { return membership_; }
  size_t connections() const { return connections_.size(); }
  // Of them, the connections that have not authenticated (yet).
  size_t strangers() const;
  // This run's nonce (never 0), which every frame after a join carries.
  uint64_t run() const { return run_; }
  size_t members() const { return connections_.size() - strangers(); }
  // How many frames were refused (unauthenticated, malformed, replayed) and connections
  // closed for it, or closed unauthenticated (past the budget or the handshake deadline),
  // for events and tests.
  uint64_t refused() const { return refused_; }

  // Waits up to `timeout_ms` for traffic, handles all of it, and returns the first verdict
  // a message or the clock brings (monotonic `now_ms`, `now_unix_ms` for the replay window).
  std::optional<Verdict> Poll(int timeout_ms, int64_t now_ms, uint64_t now_unix_ms);
  // Sends one heartbeat from rank 0 to every authenticated connection (never to a stranger);
  // a connection the frame cannot be written to whole is closed.
  void Broadcast(MessageKind kind, uint64_t now_unix_ms);
  // Sends the abort that passes `why` on (its cause, origin node, reading or status) to every
  // authenticated connection.
  void BroadcastAbort(const Verdict& why, uint64_t now_unix_ms);

 private:
  explicit Coordinator(const CoordinatorSettings& settings);
  void Accept(int64_t now_ms);
  // accept4 failed for want of a descriptor (EMFILE, ENFILE) or of kernel memory: the pending
  // connection is taken with the reserve descriptor and closed, and the listener paused.
  void AtTheLimit(int64_t now_ms);
  void WatchListener(bool watch);
  // Closes unauthenticated connections past the handshake deadline at `now_ms`, and the oldest
  // ones while more than the budget are held.
  void DropStrangers(int64_t now_ms);
  std::optional<Verdict> Read(int fd, int64_t now_ms, uint64_t now_unix_ms);
  std::optional<Verdict> Close(int fd);
  void Send(const GroupMessage& message);
  // Answers `join` on `fd` with the welcome; false when it cannot be written whole.
  bool Welcome(int fd, const GroupMessage& join, uint64_t now_unix_ms);

  CoordinatorSettings settings_;
  FileFd listener_;
  FileFd epoll_;
  // One descriptor held back from the start (an eventfd), given up for a moment at the
  // descriptor limit so the connection waiting in the listener can be taken and closed.
  FileFd reserve_;
  std::optional<int64_t> paused_until_ms_;  // the listener is out of the epoll set until then
  uint16_t port_ = 0;
  struct Connection {
    FrameReader reader;
    std::optional<uint16_t> rank;  // the rank its join claimed, once welcomed
    bool member = false;           // authenticated: a frame of this run followed the welcome
    int64_t accepted_ms = 0;       // monotonic
    uint64_t serial = 0;           // accept order: the lowest is the oldest
  };
  std::unordered_map<int, Connection> connections_;  // keyed by the descriptor they own
  ReplayGuard replay_;
  Membership membership_;
  uint64_t refused_ = 0;
  uint64_t sequence_ = 0;
  uint64_t accepted_ = 0;
  uint64_t run_ = 0;
};

}  // namespace headroom::group
