// Fuzz target for what a client sends `headroom export`: the request head parser and the
// --listen address parser; and what `top --node` reads back: the node URL and the metrics
// page. Invariants: no crash; a parsed request's path starts with '/', holds no '?' and no
// byte <= 0x20; the status is 200 on success and 400 or 505 on error; a node URL has a host,
// a port and a path from '/'; the page gives at most one sample a line.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "http_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!headroom::fuzz::HttpRequestHolds(
          std::string_view(reinterpret_cast<const char*>(data), size)))
    std::abort();
  return 0;
}
