// Common GPUs and their memory: what `plan --target NAME` budgets against when the card is
// not in this machine. The figures are the vendors' published capacities (docs/sources.md,
// "GPU memory of common cards"), read as GB (10^9 bytes): a device reports a little more
// (an H200's "141GB" is 143,771 MiB), so a plan against the table errs on the safe side.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace headroom {

struct GpuCard {
  std::string_view key;      // the --target name: "h100", "rtx-4090"
  std::string_view name;     // "H100 80GB"
  uint64_t memory_bytes;     // the published capacity, 10^9 bytes per GB
  std::string_view aliases;  // other spellings, comma-separated: "h100-sxm,h100-pcie"
};

// The table, in the order `plan --help` and the error line list them.
std::span<const GpuCard> GpuCards();

// The card a --target name means: its key or an alias, compared without case and without
// blanks, '-' or '_' ("RTX 4090", "rtx_4090" and "rtx-4090" are one card). nullptr when the
// table has none.
const GpuCard* FindGpuCard(std::string_view name);

}  // namespace headroom
