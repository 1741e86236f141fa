// Free pages parked on the kernel's per-CPU page lists, from /proc/zoneinfo.
//
// Why: a freed page goes to its CPU's list first and is not counted in MemFree (nor so in
// MemAvailable) until the list drains; an allocation takes from the list first, so
// MemAvailable does not fall for it either. Since Linux 6.7 the lists tune their own size
// and hold hundreds of MB (this 2-CPU VM, kernel 6.18: "high" 47,533 and 59,922 pages, 400
// MiB in all), so MemAvailable can miss that much of a job's use. A sweep measuring a
// trial's peak adds the listed pages back: MemAvailable + per-CPU free pages.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "sys/sysroot.h"

namespace headroom {

// The sum of every "count:" in the "pagesets" sections (pages), or nullopt when the text
// has none (kernels print them since 2.6; a fixture or hostile text may not).
std::optional<uint64_t> ParsePerCpuFreePages(std::string_view zoneinfo);

// Reads proc/zoneinfo through a descriptor kept open (pread into a reused buffer); for a
// 10 ms sampler. Bytes (pages x the page size).
class PerCpuFreeReader {
 public:
  explicit PerCpuFreeReader(const SysRoot& root);
  ~PerCpuFreeReader();
  PerCpuFreeReader(const PerCpuFreeReader&) = delete;
  PerCpuFreeReader& operator=(const PerCpuFreeReader&) = delete;
  std::optional<uint64_t> ReadBytes();

 private:
  int fd_ = -1;
  std::string buffer_;
  uint64_t page_bytes_ = 4096;
};

}  // namespace headroom
