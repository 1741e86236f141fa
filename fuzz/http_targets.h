// The body of fuzz/http_request_fuzz.cc, shared with tests/fuzz_corpus_test.cc (which replays
// fuzz/corpus/http_request/ in every build).
#pragma once

#include <algorithm>
#include <string_view>

#include "export/http.h"
#include "top/node_metrics.h"

namespace headroom::fuzz {

inline bool HttpRequestHolds(std::string_view text) {
  int status = 0;
  auto r = ParseRequestHead(text, &status);
  if (r) {
    if (status != 200 || r->path.empty() || r->path.front() != '/') return false;
    for (char c : r->path) {
      if (c == '?' || static_cast<unsigned char>(c) <= 0x20) return false;
    }
    if (r->method != "GET" && r->method != "HEAD" && r->method.empty()) return false;
  } else if (status != 400 && status != 505) {
    return false;
  }
  if (auto a = ParseListenAddress(text.substr(0, 64))) {
    if (a->first.empty()) return false;
  }
  // top --node: the URL and the metrics page it reads (top/node_metrics.h).
  if (auto u = ParseNodeUrl(text.substr(0, 256))) {
    if (u->port == 0 || u->host.empty() || u->path.empty() || u->path.front() != '/') return false;
  }
  const NodeMetrics m = ParseNodeMetrics(text);
  if (m.samples > static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1) return false;
  return true;
}

// top --node's reader of the whole answer (top/node_metrics.h: HttpAnswerBody, DecodeChunked).
// Invariants: no crash; a body is never longer than the answer it came from nor than the cap;
// a refusal says why.
inline bool HttpAnswerHolds(std::string_view text) {
  constexpr size_t kCap = 4096;
  const auto bounded = [&](const Result<std::string>& body) {
    if (!body) return !EnglishText(body.error().what).empty();
    return body->size() <= text.size() && body->size() <= kCap;
  };
  return bounded(HttpAnswerBody(text, kCap)) && bounded(DecodeChunked(text, kCap));
}

}  // namespace headroom::fuzz
