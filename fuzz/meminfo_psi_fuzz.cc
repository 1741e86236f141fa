// Fuzz target for the /proc text parsers: ParseMemInfo, ParseMemAvailableFast and ParsePsi
// must accept any bytes without crashing, and the two MemAvailable readers must agree (they
// share one value parser; this checks the line and key handling around it).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sys/meminfo.h"
#include "sys/psi.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const headroom::MemInfo info = headroom::ParseMemInfo(text);
  if (headroom::ParseMemAvailableFast(text) != info.available_bytes()) std::abort();
  (void)info.EstimatedAvailable();
  (void)info.reclaimable_page_cache_bytes();
  (void)headroom::ParsePsi(text);
  return 0;
}
