// A small HTTP/1.1 server for `headroom export`: GET and HEAD only, one request per
// connection (Connection: close), single-threaded over poll(2) with non-blocking sockets.
//
// Bounded on purpose, so a slow or hostile client cannot hold the exporter: a request head
// of at most max_request_bytes, answered or dropped within request_timeout, at most
// max_connections open at once (more are accepted and closed at once). The handler only
// reads prepared data (the sampler renders the metrics on its own thread), so a request
// never waits for a sample.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace headroom {

struct HttpRequest {
  std::string method;  // "GET", "HEAD"
  std::string path;    // without the query string
  std::string accept;  // the Accept header, "" when absent
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// Parses a request head (up to and including the blank line). An error for anything that is
// not "METHOD SP TARGET SP HTTP/1.x" followed by header lines; the status to answer with is
// in `status` (400, 505). Pure, for tests and the fuzz target.
Result<HttpRequest> ParseRequestHead(std::string_view head, int* status);

// "HTTP/1.1 404 Not Found\r\n..." with Content-Length and Connection: close; the body is left
// out for HEAD.
std::string FormatResponse(const HttpResponse& response, bool head_only);

struct HttpServerOptions {
  std::string host = "127.0.0.1";  // an IPv4 or IPv6 literal, or "localhost"
  uint16_t port = 9464;            // 0: any free port (see HttpServer::port)
  size_t max_connections = 64;
  size_t max_request_bytes = 8192;
  std::chrono::milliseconds request_timeout{5000};
};

// Whether `host` is a loopback address (127.0.0.0/8, ::1, "localhost").
bool IsLoopbackHost(std::string_view host);

// "127.0.0.1:9464", "[::1]:9464", "localhost:9464", ":9464" (loopback) -> host and port.
Result<std::pair<std::string, uint16_t>> ParseListenAddress(std::string_view text);

// The page's URL for a listening host and port: "http://127.0.0.1:9464/metrics", an IPv6
// literal in brackets ("http://[::1]:9464/metrics").
std::string MetricsUrl(std::string_view host, uint16_t port);

// A signalfd for SIGTERM, SIGINT and SIGHUP, the signals that stop the server, which are
// blocked in the calling thread first (threads started after it inherit the mask), so that
// they arrive only through the descriptor: Serve's `stop_fd`. -1 when signalfd fails.
int OpenStopSignalFd();

class HttpServer {
 public:
  static Result<HttpServer> Listen(const HttpServerOptions& options);
  HttpServer(HttpServer&& other) noexcept;
  HttpServer& operator=(HttpServer&&) = delete;
  HttpServer(const HttpServer&) = delete;
  ~HttpServer();

  uint16_t port() const { return port_; }

  // Serves until `stop_fd` becomes readable (a signalfd or a pipe). `handler` answers every
  // well-formed GET/HEAD; `on_response` is told each status sent (for the request counter).
  Result<bool> Serve(int stop_fd, const std::function<HttpResponse(const HttpRequest&)>& handler,
                     const std::function<void(int status)>& on_response);

 private:
  HttpServer(int fd, uint16_t port, HttpServerOptions options)
      : fd_(fd), port_(port), options_(std::move(options)) {}
  int fd_ = -1;
  uint16_t port_ = 0;
  HttpServerOptions options_;
};

}  // namespace headroom
