// Implementation notes: the socket is non-blocking from the start and every step polls against
// one deadline, so a peer that accepts and never answers, or answers one byte a second, ends
// at the deadline. Only literal addresses are connected to: a name would need a resolver,
// which can block on its own timeouts. The request is HTTP/1.1, so a server may answer with a
// chunked body (Python's http.server and Go's net/http do for a page of unknown length); it is
// decoded from the whole answer once the connection closes, and the answer, hence the body,
// is already capped at max_bytes on the wire.
#include "top/node_metrics.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "base/message.h"
#include "base/safe_file.h"
#include "base/text.h"

namespace headroom {
namespace {

using Clock = std::chrono::steady_clock;

int MillisecondsLeft(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

// Waits for `events` on `fd` until the deadline: false when it passed.
bool WaitFor(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, MillisecondsLeft(deadline));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return true;  // the next call reports the error
  }
}

// "kind" from `{a="x",kind="gb10"}`: the label's value, unescaped only for \" and \\.
std::string Label(std::string_view labels, std::string_view key) {
  size_t at = 0;
  while ((at = labels.find(key, at)) != std::string_view::npos) {
    const bool starts = at == 0 || labels[at - 1] == '{' || labels[at - 1] == ',';
    if (starts && labels.substr(at + key.size()).starts_with("=\"")) {
      std::string out;
      for (size_t i = at + key.size() + 2; i < labels.size(); ++i) {
        if (labels[i] == '\\' && i + 1 < labels.size()) {
          out += labels[++i];
        } else if (labels[i] == '"') {
          return out;
        } else {
          out += labels[i];
        }
      }
      return "";
    }
    at += key.size();
  }
  return "";
}

std::optional<double> Number(std::string_view text) {
  double v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  return v;
}

void First(std::optional<double>& into, std::optional<double> value) {
  if (!into) into = value;
}

}  // namespace

Result<NodeUrl> ParseNodeUrl(std::string_view url) {
  NodeUrl out;
  out.text = std::string(url);
  std::string_view rest = url;
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.find("://") != std::string_view::npos) {
    return Error{Msg("{}: only http:// is read (the page of headroom export)", url)};
  }
  const size_t slash = rest.find('/');
  if (slash != std::string_view::npos) {
    out.path = std::string(rest.substr(slash));
    rest = rest.substr(0, slash);
  }
  for (char c : out.path) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f)
      return Error{Msg("{}: the path has a space or a control character", url)};
  }
  std::string_view host, port;
  if (rest.starts_with('[')) {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos || !rest.substr(close + 1).starts_with(':'))
      return Error{Msg("{}: no port (give HOST:PORT, e.g. http://127.0.0.1:9464)", url)};
    host = rest.substr(1, close - 1);
    port = rest.substr(close + 2);
  } else {
    const size_t colon = rest.rfind(':');
    if (colon == std::string_view::npos)
      return Error{Msg("{}: no port (give HOST:PORT, e.g. http://127.0.0.1:9464)", url)};
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  unsigned value = 0;
  const auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || p != port.data() + port.size() || value < 1 || value > 65535)
    return Error{Msg("{}: '{}' is not a port from 1 to 65535", url, port)};
  out.port = static_cast<uint16_t>(value);
  out.host = host == "localhost" ? "127.0.0.1" : std::string(host);
  in6_addr six{};
  in_addr four{};
  if (::inet_pton(AF_INET, out.host.c_str(), &four) != 1 &&
      ::inet_pton(AF_INET6, out.host.c_str(), &six) != 1)
    return Error{Msg("{}: '{}' is not an IP address (names are not looked up)", url, host)};
  return out;
}

Result<std::string> FetchNodeMetrics(const NodeUrl& url, std::chrono::milliseconds timeout,
                                     size_t max_bytes) {
  const auto deadline = Clock::now() + timeout;
  sockaddr_storage address{};
  socklen_t length = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
  if (::inet_pton(AF_INET, url.host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(url.port);
    length = sizeof *v4;
  } else if (::inet_pton(AF_INET6, url.host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(url.port);
    length = sizeof *v6;
  } else {
    return Error{Msg("'{}' is not an IP address", url.host)};
  }
  FileFd fd(::socket(address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return ErrnoError("socket");
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), length) != 0) {
    if (errno != EINPROGRESS) return ErrnoError("connect");
    if (!WaitFor(fd.get(), POLLOUT, deadline))
      return Error{Msg("no answer within {} ms", timeout.count())};
    int error = 0;
    socklen_t size = sizeof error;
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &size) != 0) error = errno;
    if (error != 0) return ErrnoError("connect", error);
  }
  const std::string request = "GET " + url.path + " HTTP/1.1\r\nHost: " + url.host +
                              "\r\nConnection: close\r\nUser-Agent: headroom-top\r\n\r\n";
  size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
      return ErrnoError("write");
    } else if (!WaitFor(fd.get(), POLLOUT, deadline)) {
      return Error{Msg("no answer within {} ms", timeout.count())};
    }
  }
  std::string answer;
  char buf[16384];
  for (;;) {
    const ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
    if (n > 0) {
      answer.append(buf, static_cast<size_t>(n));
      if (answer.size() > max_bytes) return Error{Msg("answer larger than {} bytes", max_bytes)};
    } else if (n == 0) {
      break;
    } else if (errno != EAGAIN && errno != EINTR) {
      return ErrnoError("read");
    } else if (!WaitFor(fd.get(), POLLIN, deadline)) {
      return Error{Msg("no answer within {} ms", timeout.count())};
    }
  }
  return HttpAnswerBody(answer, max_bytes);
}

Result<std::string> HttpAnswerBody(std::string_view answer, size_t max_bytes) {
  if (!answer.starts_with("HTTP/1.")) return Error{Msg("not HTTP")};
  const size_t space = answer.find(' ');
  const std::string_view status = answer.substr(space + 1, 3);
  if (status != "200") return Error{Msg("HTTP status {}", status)};
  const size_t end = answer.find("\r\n\r\n");
  if (end == std::string_view::npos) return Error{Msg("not HTTP")};
  const std::string_view body = answer.substr(end + 4);
  // The headers after the status line, one a line: only Transfer-Encoding matters here (the
  // body is read to the close, so Content-Length is not needed).
  std::string_view headers = answer.substr(0, end + 2);
  headers.remove_prefix(std::min(headers.size(), headers.find("\r\n") + 2));
  std::string coding;
  while (!headers.empty()) {
    const size_t eol = headers.find("\r\n");
    const std::string_view line = headers.substr(0, eol);
    headers.remove_prefix(eol == std::string_view::npos ? headers.size() : eol + 2);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || AsciiLower(line.substr(0, colon)) != "transfer-encoding")
      continue;
    // "gzip, chunked": the last coding is the one applied last, so the one to undo first.
    const std::string value = AsciiLower(TrimBlanks(line.substr(colon + 1)));
    coding = std::string(TrimBlanks(std::string_view(value).substr(value.rfind(',') + 1)));
  }
  if (coding.empty() || coding == "identity") {
    if (body.size() > max_bytes) return Error{Msg("answer larger than {} bytes", max_bytes)};
    return std::string(body);
  }
  if (coding != "chunked") return Error{Msg("transfer coding '{}' is not read", coding)};
  return DecodeChunked(body, max_bytes);
}

Result<std::string> DecodeChunked(std::string_view body, size_t max_bytes) {
  std::string out;
  for (;;) {
    const size_t eol = body.find("\r\n");
    if (eol == std::string_view::npos) return Error{Msg("chunked body cut short")};
    const std::string_view line = body.substr(0, eol);
    body.remove_prefix(eol + 2);
    // The size: hex digits, then nothing, blanks, or ';' and an extension. 16 digits fill 64
    // bits; more would overflow, so they are refused before any arithmetic.
    uint64_t size = 0;
    size_t digits = 0;
    while (digits < line.size() && std::isxdigit(static_cast<unsigned char>(line[digits]))) {
      ++digits;
    }
    const std::string_view rest = TrimBlanks(line.substr(digits));
    if (digits == 0 || digits > 16 || (!rest.empty() && rest.front() != ';'))
      return Error{Msg("bad chunk size")};
    std::from_chars(line.data(), line.data() + digits, size, 16);
    if (size == 0) return out;  // the last chunk; trailers, if any, are not needed
    if (size > max_bytes - out.size())
      return Error{Msg("chunked body larger than {} bytes", max_bytes)};
    if (size > body.size() || body.size() - size < 2 || body.substr(size, 2) != "\r\n")
      return Error{Msg("chunked body cut short")};
    out.append(body.substr(0, size));
    body.remove_prefix(size + 2);
  }
}

NodeMetrics ParseNodeMetrics(std::string_view text) {
  NodeMetrics m;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#' || line.size() > 65536) continue;
    const size_t name_end = line.find_first_of("{ ");
    if (name_end == std::string_view::npos || name_end == 0) continue;
    const std::string_view name = line.substr(0, name_end);
    std::string_view labels, rest = line.substr(name_end);
    if (rest.front() == '{') {
      // The closing brace outside a quoted value.
      bool quoted = false;
      size_t close = std::string_view::npos;
      for (size_t i = 1; i < rest.size(); ++i) {
        if (quoted && rest[i] == '\\') {
          ++i;
        } else if (rest[i] == '"') {
          quoted = !quoted;
        } else if (!quoted && rest[i] == '}') {
          close = i;
          break;
        }
      }
      if (close == std::string_view::npos) continue;
      labels = rest.substr(0, close + 1);
      rest = rest.substr(close + 1);
    }
    const size_t start = rest.find_first_not_of(' ');
    if (start == std::string_view::npos) continue;
    rest.remove_prefix(start);
    const auto value = Number(rest.substr(0, rest.find(' ')));
    if (!value) continue;
    ++m.samples;
    if (name == "headroom_memory_total_bytes") {
      First(m.mem_total_bytes, value);
    } else if (name == "headroom_memory_available_bytes") {
      First(m.mem_available_bytes, value);
    } else if (name == "headroom_memory_pressure_avg10_ratio" && Label(labels, "kind") == "some") {
      First(m.psi_some_avg10_ratio, value);
    } else if (name == "headroom_gpu_temperature_celsius") {
      First(m.gpu_temperature_c, value);
    } else if (name == "headroom_gpu_power_watts") {
      First(m.gpu_power_w, value);
    } else if (name == "headroom_gpu_utilization_ratio") {
      First(m.gpu_utilization_ratio, value);
    } else if (name == "headroom_guard_runs_total") {
      First(m.guard_runs, value);
    } else if (name == "headroom_guard_kills_total") {
      First(m.guard_kills, value);
    } else if (name == "headroom_platform_info" && m.platform.empty()) {
      m.platform = Label(labels, "kind");
    }
  }
  return m;
}

}  // namespace headroom
