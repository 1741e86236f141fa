// A TCP listener on loopback that never answers a new connection: its accept queue is full,
// and Linux drops a SYN for a full queue, so a client's connect waits in SYN_SENT as it would
// for a node whose coordinator is wedged or behind a dropping firewall.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

namespace headroom::testing {

class SilentListener {
 public:
  // Listens with a backlog of 0 and connects clients, never accepted, until one is left
  // unanswered for 200 ms (at most 8). full() says whether that state was reached.
  SilentListener() {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof a;
    if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        listen(listen_fd_, 0) != 0 ||
        getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &size) != 0) {
      return;
    }
    port_ = ntohs(a.sin_port);
    for (int i = 0; i < 8 && !full_; ++i) {
      const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (fd < 0) return;
      clients_.push_back(fd);
      if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) continue;
      pollfd p{fd, POLLOUT, 0};
      full_ = poll(&p, 1, 200) == 0;  // no SYN-ACK in 200 ms: the queue is full
    }
  }
  ~SilentListener() {
    for (int fd : clients_) close(fd);
    if (listen_fd_ >= 0) close(listen_fd_);
  }
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;

  bool full() const { return full_; }
  uint16_t port() const { return port_; }

 private:
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  bool full_ = false;
  std::vector<int> clients_;
};

// A TCP listener on loopback whose connections the kernel accepts and nobody answers (a
// coordinator that says nothing, or a test's own peer that accepts later): fd() to accept
// with, port() to connect to; closed with the object.
class QuietListener {
 public:
  explicit QuietListener(int backlog) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof a;
    if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        listen(fd_, backlog) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &size) != 0) {
      return;
    }
    port_ = ntohs(a.sin_port);
  }
  ~QuietListener() {
    if (fd_ >= 0) close(fd_);
  }
  QuietListener(const QuietListener&) = delete;
  QuietListener& operator=(const QuietListener&) = delete;

  int fd() const { return fd_; }
  uint16_t port() const { return port_; }  // 0: it could not listen

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

}  // namespace headroom::testing
