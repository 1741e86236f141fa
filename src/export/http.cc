#include "export/http.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <vector>

#include "base/message.h"
#include "base/text.h"

namespace headroom {
namespace {

using Clock = std::chrono::steady_clock;

std::string_view Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Error";
  }
}

struct Connection {
  int fd = -1;
  std::string in;
  std::string out;
  size_t sent = 0;
  bool responding = false;
  // Answered before its request was read whole (431, a body after the head): once the answer
  // is out, the write side is shut and the rest read and dropped until the client closes or
  // the deadline. Closing with unread bytes makes the kernel send a reset, which can reach
  // the client before the answer does (431 came back as "connection reset").
  bool linger = false;
  bool draining = false;
  Clock::time_point deadline;
};

// Reads and drops what a lingering connection still sends; true when it is done (the client
// closed, or an error).
bool DrainInput(int fd) {
  char buf[4096];
  for (int i = 0; i < 16; ++i) {
    const ssize_t got = ::recv(fd, buf, sizeof buf, 0);
    if (got == 0) return true;
    if (got < 0) return errno != EAGAIN && errno != EINTR;
  }
  return false;
}

}  // namespace

Result<HttpRequest> ParseRequestHead(std::string_view head, int* status) {
  *status = 400;
  const size_t eol = head.find("\r\n");
  if (eol == std::string_view::npos) return Error{"request line not terminated"};
  const std::string_view line = head.substr(0, eol);
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos ||
      line.find(' ', sp2 + 1) != std::string_view::npos) {
    return Error{"malformed request line"};
  }
  HttpRequest r;
  r.method = std::string(line.substr(0, sp1));
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (r.method.empty() || target.empty() || target.front() != '/')
    return Error{"malformed request target"};
  for (char c : r.method) {
    if (c < 'A' || c > 'Z') return Error{"malformed method"};
  }
  if (version.substr(0, 7) != "HTTP/1.") {
    *status = 505;
    return Error{"not HTTP/1.x"};
  }
  for (char c : target) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f)
      return Error{"control character in the target"};
  }
  r.path = std::string(target.substr(0, target.find('?')));
  std::string_view rest = head.substr(eol + 2);
  while (!rest.empty()) {
    const size_t e = rest.find("\r\n");
    const std::string_view h = rest.substr(0, e);
    rest = e == std::string_view::npos ? std::string_view() : rest.substr(e + 2);
    if (h.empty()) break;
    const size_t colon = h.find(':');
    if (colon == std::string_view::npos || colon == 0) return Error{"malformed header line"};
    if (AsciiLower(h.substr(0, colon)) == "accept")
      r.accept = std::string(TrimBlanks(h.substr(colon + 1)));
  }
  *status = 200;
  return r;
}

std::string FormatResponse(const HttpResponse& response, bool head_only) {
  std::string out = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n"
      "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n\r\n",
      response.status, Reason(response.status), response.content_type, response.body.size());
  if (!head_only) out += response.body;
  return out;
}

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost" || host == "::1") return true;
  in_addr v4{};
  const std::string h(host);
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  return false;
}

std::string MetricsUrl(std::string_view host, uint16_t port) {
  const bool ipv6 = host.find(':') != std::string_view::npos;
  return fmt::format("http://{}{}{}:{}/metrics", ipv6 ? "[" : "", host, ipv6 ? "]" : "", port);
}

int OpenStopSignalFd() {
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &mask, nullptr);
  return signalfd(-1, &mask, SFD_CLOEXEC);
}

Result<std::pair<std::string, uint16_t>> ParseListenAddress(std::string_view text) {
  std::string host;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return Error{fmt::format("--listen: '{}' is not [IPv6]:PORT", text)};
    }
    host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos)
      return Error{fmt::format("--listen: '{}' is not HOST:PORT", text)};
    host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
    if (host.find(':') != std::string::npos)
      return Error{fmt::format("--listen: '{}': write an IPv6 host in brackets", text)};
  }
  if (host.empty()) host = "127.0.0.1";
  unsigned port = 0;
  auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || p != port_text.data() + port_text.size() || port_text.empty() ||
      port > 65535) {
    return Error{fmt::format("--listen: '{}' is not a port (0-65535)", port_text)};
  }
  in_addr v4{};
  in6_addr v6{};
  if (host != "localhost" && inet_pton(AF_INET, host.c_str(), &v4) != 1 &&
      inet_pton(AF_INET6, host.c_str(), &v6) != 1) {
    return Error{fmt::format("--listen: '{}' is not an IP address (or localhost)", host)};
  }
  return std::pair{host, static_cast<uint16_t>(port)};
}

Result<HttpServer> HttpServer::Listen(const HttpServerOptions& options) {
  const std::string host = options.host == "localhost" ? "127.0.0.1" : options.host;
  sockaddr_storage addr{};
  socklen_t len = 0;
  int family = AF_INET;
  in_addr v4{};
  in6_addr v6{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    auto* a = reinterpret_cast<sockaddr_in*>(&addr);
    a->sin_family = AF_INET;
    a->sin_port = htons(options.port);
    a->sin_addr = v4;
    len = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    family = AF_INET6;
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(options.port);
    a->sin6_addr = v6;
    len = sizeof(sockaddr_in6);
  } else {
    return Error{fmt::format("listen: '{}' is not an IP address", options.host)};
  }
  const int fd = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return ErrnoError("listen: socket");
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    const int saved = errno;
    ::close(fd);
    return ErrnoError(fmt::format("listen: bind {}:{}", options.host, options.port), saved);
  }
  if (::listen(fd, 64) != 0) {
    const int saved = errno;
    ::close(fd);
    return ErrnoError("listen: listen", saved);
  }
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof bound;
  uint16_t port = options.port;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &bound_len) == 0) {
    port = ntohs(family == AF_INET ? reinterpret_cast<sockaddr_in*>(&bound)->sin_port
                                   : reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  }
  return HttpServer(fd, port, options);
}

HttpServer::HttpServer(HttpServer&& other) noexcept
    : fd_(other.fd_), port_(other.port_), options_(std::move(other.options_)) {
  other.fd_ = -1;
}

HttpServer::~HttpServer() {
  if (fd_ >= 0) ::close(fd_);
}

Result<bool> HttpServer::Serve(int stop_fd,
                               const std::function<HttpResponse(const HttpRequest&)>& handler,
                               const std::function<void(int status)>& on_response) {
  std::vector<Connection> conns;
  auto respond = [&](Connection& c, const HttpResponse& r, bool head_only) {
    c.out = FormatResponse(r, head_only);
    c.sent = 0;
    c.responding = true;
    on_response(r.status);
  };
  for (;;) {
    std::vector<pollfd> fds;
    fds.push_back({stop_fd, POLLIN, 0});
    fds.push_back({fd_, POLLIN, 0});
    for (const auto& c : conns)
      fds.push_back({c.fd, static_cast<short>(c.responding && !c.draining ? POLLOUT : POLLIN), 0});
    // Wake for the earliest deadline.
    auto now = Clock::now();
    int timeout_ms = 1000;
    for (const auto& c : conns) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(c.deadline - now).count();
      timeout_ms =
          static_cast<int>(std::max<long long>(0, std::min<long long>(timeout_ms, left + 1)));
    }
    const int n = ::poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("http: poll");
    }
    if (fds[0].revents != 0) break;
    now = Clock::now();
    // Connections first (their indexes in fds are 2..).
    for (size_t i = 0; i < conns.size(); ++i) {
      Connection& c = conns[i];
      const short ev = fds[i + 2].revents;
      bool close_it = false;
      if (c.draining) {
        close_it = (ev & (POLLIN | POLLHUP | POLLERR)) && DrainInput(c.fd);
      } else if (!c.responding && (ev & (POLLIN | POLLHUP | POLLERR))) {
        char buf[4096];
        const ssize_t got = ::recv(c.fd, buf, sizeof buf, 0);
        if (got <= 0) {
          close_it = got == 0 || (errno != EAGAIN && errno != EINTR);
        } else {
          c.in.append(buf, static_cast<size_t>(got));
          const size_t end = c.in.find("\r\n\r\n");
          if (end == std::string::npos && c.in.size() > options_.max_request_bytes) {
            c.linger = true;
            respond(c, {431, "text/plain; charset=utf-8", "request head too large\n"}, false);
          } else if (end != std::string::npos) {
            c.linger = c.in.size() > end + 4;  // a body, or a second request: not read
            int status = 400;
            auto req = ParseRequestHead(std::string_view(c.in).substr(0, end + 4), &status);
            if (!req) {
              respond(c,
                      {status, "text/plain; charset=utf-8", EnglishText(req.error().what) + "\n"},
                      false);
            } else if (req->method != "GET" && req->method != "HEAD") {
              respond(c, {405, "text/plain; charset=utf-8", "only GET and HEAD\n"},
                      req->method == "HEAD");
            } else {
              respond(c, handler(*req), req->method == "HEAD");
            }
          }
        }
      } else if (c.responding && (ev & (POLLOUT | POLLHUP | POLLERR))) {
        if (ev & (POLLHUP | POLLERR)) {
          close_it = true;
        } else {
          const ssize_t put =
              ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
          if (put < 0) {
            close_it = errno != EAGAIN && errno != EINTR;
          } else {
            c.sent += static_cast<size_t>(put);
            if (c.sent == c.out.size() && c.linger) {
              ::shutdown(c.fd, SHUT_WR);  // the answer is out: FIN, then read to the end
              c.draining = true;
            } else {
              close_it = c.sent == c.out.size();
            }
          }
        }
      }
      if (!close_it && now >= c.deadline) close_it = true;  // too slow: drop it, no answer owed
      if (close_it) {
        ::close(c.fd);
        c.fd = -1;
      }
    }
    std::erase_if(conns, [](const Connection& c) { return c.fd < 0; });
    // New connections.
    if (fds[1].revents & POLLIN) {
      for (int k = 0; k < 64; ++k) {
        const int cfd = ::accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) break;
        if (conns.size() >= options_.max_connections) {
          // Over the limit: a short answer if the socket takes it at once, then close.
          const std::string busy =
              FormatResponse({503, "text/plain; charset=utf-8", "too many connections\n"}, false);
          (void)::send(cfd, busy.data(), busy.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
          on_response(503);
          ::close(cfd);
          continue;
        }
        Connection c;
        c.fd = cfd;
        c.deadline = Clock::now() + options_.request_timeout;
        conns.push_back(std::move(c));
      }
    }
  }
  for (auto& c : conns) ::close(c.fd);
  return true;
}

}  // namespace headroom
