// `headroom top --node URL`: another machine's readings, from the /metrics page its `headroom
// export` serves (docs/export.md). Three parts, each testable alone: the URL (an http://
// address only, no name lookup: an IPv4 or [IPv6] literal, or localhost), one bounded GET
// over TCP, and the Prometheus text read for the few figures top's node pane shows.
//
// Bounds: the connection, the request and the whole answer share one deadline (`timeout`);
// the answer is read up to `max_bytes` (an error beyond); the parser reads lines up to 64 KiB
// and ignores what it does not know. Nothing an exporter sends can make top wait past the
// deadline or hold more than `max_bytes`.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace headroom {

struct NodeUrl {
  std::string host;  // as written: "127.0.0.1", "::1", "localhost"
  uint16_t port = 0;
  std::string path = "/metrics";
  std::string text;  // the URL as given, for the pane's title
};

// "http://HOST:PORT[/PATH]" or "HOST:PORT" (the path defaults to /metrics). Errors: another
// scheme, no port, a port outside 1-65535, a host name other than localhost (no DNS), a path
// with spaces or control characters.
Result<NodeUrl> ParseNodeUrl(std::string_view url);

// The body of a 200 answer to "GET path HTTP/1.1" (read to the connection's close). Errors
// name the step: connect, write, read, "no answer within N ms", "answer larger than N bytes",
// and HttpAnswerBody's.
Result<std::string> FetchNodeMetrics(const NodeUrl& url, std::chrono::milliseconds timeout,
                                     size_t max_bytes);

// The body of a whole HTTP/1.x answer (status line, headers, body up to the close): a 200's
// body, decoded when a Transfer-Encoding header ends in "chunked" (RFC 9112 section 7.1, the
// form a server that streams its page sends). Errors: "not HTTP", "HTTP status N", a transfer
// coding other than chunked, and DecodeChunked's.
Result<std::string> HttpAnswerBody(std::string_view answer, size_t max_bytes);

// A chunked body decoded: hex chunk sizes (extensions after ';' ignored), each chunk's data
// followed by CRLF, up to the last chunk of size 0 (trailers after it ignored). Errors: "bad
// chunk size" (no hex digit, another character, more than 16 digits), "chunked body larger
// than N bytes" (checked before a chunk is copied), "chunked body cut short" (the data or the
// last chunk missing). Never reads past `body` and never holds more than `max_bytes`.
Result<std::string> DecodeChunked(std::string_view body, size_t max_bytes);

// What the node pane shows; nullopt where the page did not have it.
struct NodeMetrics {
  std::optional<double> mem_total_bytes, mem_available_bytes;
  std::optional<double> psi_some_avg10_ratio;
  std::optional<double> gpu_temperature_c, gpu_power_w, gpu_utilization_ratio;
  std::optional<double> guard_runs, guard_kills;
  std::string platform;  // headroom_platform_info's kind label, "" when absent
  size_t samples = 0;    // lines read as samples (any name)
};

// Reads the Prometheus text format leniently: "# ..." lines and names it does not know are
// skipped; for a GPU metric with several series (one per GPU) the first is taken. A line that
// is not NAME[{labels}] VALUE is skipped. Never fails.
NodeMetrics ParseNodeMetrics(std::string_view text);

}  // namespace headroom
