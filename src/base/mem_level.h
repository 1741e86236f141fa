// A level of the memory pool as a user writes it (docs/guard.md "Levels"): a size with its
// unit or a percentage of MemTotal. The guard's kill and warning levels, `sweep`'s
// --min-available and --require-available, `watch --guard`'s levels from config.toml and
// `ps --need` all take one. A bare number is refused, not read as bytes: `--min-available 10`
// meant 10 GiB, and a kill level of 10 bytes never fires.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/result.h"

namespace headroom {

struct MemLevel {
  bool is_percent = false;
  uint64_t bytes = 0;  // when !is_percent
  double percent = 0;  // when is_percent, in (0, 100)
};

// "8GiB", "8G" (binary, as base/bytes.h reads it), "8GB", "512MiB", "4096B", "8%", "0.5%".
// Refused, with the text and the reason: a bare number ("10", "1e9"), zero, a negative or
// unknown unit, a percentage that is not plain digits ("1e1%", "0x10%", "nan%") or not in
// (0, 100), and anything base/bytes.h ParseBytes refuses.
Result<MemLevel> ParseMemLevel(std::string_view text);

// The level in bytes for a machine with `mem_total_bytes` (a percentage of it, truncated).
uint64_t MemLevelBytes(const MemLevel& level, uint64_t mem_total_bytes);

// The level in bytes, refused when it is at or above MemTotal (MemAvailable is always below
// it: a kill level there kills every job at once, a warning level warns for ever). A
// machine whose MemTotal is unknown (0) takes any level.
Result<uint64_t> MemLevelBelowTotal(const MemLevel& level, uint64_t mem_total_bytes,
                                    std::string_view text);

}  // namespace headroom
