// MemInfo: /proc/meminfo, parsed by key (docs/style.md rules 2 and 4).
//
// The file is "Key:   value kB" lines, one per field, in an order that changes between
// kernel versions and configurations (CmaTotal only with CONFIG_CMA, DirectMap* only on x86,
// MemAvailable only since 3.14). So every line is parsed into a map by its key and nothing
// depends on line order. "kB" means KiB in this file (fs/proc/meminfo.c shifts page counts by
// PAGE_SHIFT - 10), so those values are stored as bytes (x1024). Lines with no unit
// (HugePages_Total, HugePages_Free, HugePages_Rsvd, HugePages_Surp) are counts of huge pages
// and stay plain counts. Unknown keys are kept; lines that do not parse are skipped and
// counted, never fatal: one corrupt line must not cost the reading of MemAvailable.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "sys/sysroot.h"

namespace headroom {

// One parsed meminfo line: the value and whether it was a "kB" field (then `value` is bytes)
// or a bare count (HugePages_*).
struct MemInfoField {
  uint64_t value = 0;
  bool in_bytes = false;
};

// What the system can give a new workload without swapping, and where the figure came from.
struct AvailableEstimate {
  uint64_t bytes = 0;
  std::string_view source;  // one of the kMemAvailableSource* strings below
};

inline constexpr std::string_view kMemAvailableSourceKernel = "MemAvailable";
inline constexpr std::string_view kMemAvailableSourceEstimated =
    "estimated: MemFree + Active(file) + Inactive(file) + SReclaimable "
    "(kernel without MemAvailable)";

class MemInfo {
 public:
  // The raw value of `key` ("MemTotal", "HugePages_Total"): bytes for kB fields, a count
  // otherwise; nullopt when the kernel did not print the key (or its line was malformed).
  std::optional<uint64_t> Get(std::string_view key) const;

  // Named fields. Each is nullopt when absent, never 0 (docs/style.md rule 7): a hostile or
  // truncated file must not read as "no memory".
  std::optional<uint64_t> total_bytes() const { return Get("MemTotal"); }
  // MemAvailable: the kernel's own estimate (si_mem_available), missing before 3.14.
  std::optional<uint64_t> available_bytes() const { return Get("MemAvailable"); }
  std::optional<uint64_t> free_bytes() const { return Get("MemFree"); }
  std::optional<uint64_t> cached_bytes() const { return Get("Cached"); }
  std::optional<uint64_t> buffers_bytes() const { return Get("Buffers"); }
  std::optional<uint64_t> sreclaimable_bytes() const { return Get("SReclaimable"); }
  std::optional<uint64_t> shmem_bytes() const { return Get("Shmem"); }
  std::optional<uint64_t> swap_total_bytes() const { return Get("SwapTotal"); }
  std::optional<uint64_t> swap_free_bytes() const { return Get("SwapFree"); }

  // Memory the kernel holds as caches it can drop under pressure:
  //   Cached + Buffers + SReclaimable - Shmem.
  // Cached counts tmpfs and shared-memory pages (Shmem), which live on the anon LRU and can
  // only go to swap, so they are taken out. SReclaimable (dentry and inode slabs) is not page
  // cache, but it is dropped by the same reclaim, which is why it is included. This is an
  // upper bound: dirty pages need writeback first and mlocked or busy pages stay. nullopt
  // when Cached is absent; a missing Buffers, SReclaimable or Shmem counts as 0.
  std::optional<uint64_t> reclaimable_page_cache_bytes() const;

  // MemAvailable when the kernel prints it. Otherwise the formula of si_mem_available()
  // (mm/page_alloc.c; mm/show_mem.c in recent kernels): MemFree + Active(file) + Inactive(file) +
  // SReclaimable. The kernel also subtracts totalreserve_pages and up to the low watermark
  // twice; those are not in meminfo (only in /proc/zoneinfo), so the estimate omits them and
  // reads high by a few hundred MiB on a large machine. Capped at MemTotal. nullopt when
  // neither MemAvailable nor MemFree is present.
  std::optional<AvailableEstimate> EstimatedAvailable() const;

  // Every well-formed field, by key, including ones this code does not name.
  const std::map<std::string, MemInfoField, std::less<>>& fields() const { return fields_; }
  // Non-blank lines skipped as malformed: no colon, bad key, non-numeric, negative, an
  // unknown unit, a value that overflows uint64 (after x1024).
  size_t malformed_lines() const { return malformed_lines_; }
  // Well-formed lines whose key was already seen. The first occurrence wins, as in
  // ParseMemAvailableFast, so both readers agree on any text.
  size_t duplicate_lines() const { return duplicate_lines_; }

 private:
  friend MemInfo ParseMemInfo(std::string_view text);

  std::map<std::string, MemInfoField, std::less<>> fields_;
  size_t malformed_lines_ = 0;
  size_t duplicate_lines_ = 0;
};

// Parses the text of /proc/meminfo. Pure, total: any input gives a MemInfo.
MemInfo ParseMemInfo(std::string_view text);

// Reads and parses "proc/meminfo" below `root`. An error when the file cannot be read, or
// when it holds no MemTotal line (then it is not a meminfo file at all).
Result<MemInfo> ReadMemInfo(const SysRoot& root);

// Only MemAvailable in bytes, without building the map or allocating: for a guard that polls
// many times a second. The first well-formed "MemAvailable:" line wins, and it uses the same
// value rules as ParseMemInfo, so the two agree on every input (the fuzz target checks).
std::optional<uint64_t> ParseMemAvailableFast(std::string_view text);

}  // namespace headroom
