// Fuzz target for the answer `top --node` reads back from another machine's exporter: the
// status line, the Transfer-Encoding header and a chunked body (top/node_metrics.h).
// Invariants: no crash; the body is never longer than the answer nor than the cap; a refusal
// has a message. Seeds in fuzz/corpus/http_answer/.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "http_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!headroom::fuzz::HttpAnswerHolds(std::string_view(reinterpret_cast<const char*>(data), size)))
    std::abort();
  return 0;
}
