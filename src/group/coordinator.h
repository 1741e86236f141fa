// Node rank 0's end of the guard group's channel (docs/guard-group.md "The coordinator"): a
// TCP listener on the one address given, an epoll set of member connections, each cut into
// frames by its own FrameReader, each frame decoded, replay-checked and handed to the
// Membership. Non-blocking throughout; the guard loop calls Poll with its own timeout.
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
  uint64_t replay_window_ms = 30'000;
};

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
  // How many frames were refused (unauthenticated, malformed, replayed) and connections
  // closed for it, for events and tests.
  uint64_t refused() const { return refused_; }

  // Waits up to `timeout_ms` for traffic, handles all of it, and returns the first verdict
  // a message or the clock brings (monotonic `now_ms`, `now_unix_ms` for the replay window).
  std::optional<Verdict> Poll(int timeout_ms, int64_t now_ms, uint64_t now_unix_ms);
  // Sends one heartbeat from rank 0 to every connection; a connection the frame cannot be
  // written to whole is closed.
  void Broadcast(MessageKind kind, uint64_t now_unix_ms);
  // Sends the abort that passes `why` on (its cause, origin node, reading or status) to every
  // connection.
  void BroadcastAbort(const Verdict& why, uint64_t now_unix_ms);

 private:
  explicit Coordinator(const CoordinatorSettings& settings);
  void Accept();
  std::optional<Verdict> Read(int fd, int64_t now_ms, uint64_t now_unix_ms);
  std::optional<Verdict> Close(int fd);
  void Send(const GroupMessage& message);

  CoordinatorSettings settings_;
  FileFd listener_;
  FileFd epoll_;
  uint16_t port_ = 0;
  struct Connection {
    FrameReader reader;
    std::optional<uint16_t> rank;  // once a frame from it was accepted
  };
  std::unordered_map<int, Connection> connections_;  // keyed by the descriptor they own
  ReplayGuard replay_;
  Membership membership_;
  uint64_t refused_ = 0;
  uint64_t sequence_ = 0;
};

}  // namespace headroom::group
