// Implementation notes.
//  - zoneinfo prints, per zone, "  pagesets" then per CPU "    cpu: N", "count: C",
//    "high: H", "batch: B"... Only "count:" lines after a "pagesets" line and before the
//    next "Node" line are summed; other "count" spellings elsewhere are not touched.
//  - The file is a few KB per CPU (about 14 KB on 2 CPUs; a 20-core GB10 some 100 KB): the
//    buffer grows to fit and is reused, so steady-state reads do not allocate.
#include "sys/zoneinfo.h"

#include <fcntl.h>
#include <unistd.h>

#include "base/text.h"

namespace headroom {
namespace {

constexpr size_t kMaxZoneinfoBytes = 8 << 20;

}  // namespace

std::optional<uint64_t> ParsePerCpuFreePages(std::string_view text) {
  bool in_pagesets = false, found = false;
  uint64_t total = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = TrimBlanks(text.substr(start, end - start));
    start = end + 1;
    if (line.substr(0, 5) == "Node ") {
      in_pagesets = false;
    } else if (line == "pagesets") {
      in_pagesets = true;
    } else if (in_pagesets && line.substr(0, 6) == "count:") {
      const std::string_view digits = TrimBlanks(line.substr(6));
      if (digits.empty() || digits.size() > 15) continue;
      uint64_t v = 0;
      bool ok = true;
      for (char c : digits) {
        if (c < '0' || c > '9') {
          ok = false;
          break;
        }
        v = v * 10 + static_cast<uint64_t>(c - '0');
      }
      if (!ok) continue;
      total += v;
      found = true;
    }
  }
  if (!found) return std::nullopt;
  return total;
}

PerCpuFreeReader::PerCpuFreeReader(const SysRoot& root) {
  fd_ = OpenKernelFile(root.Path("proc/zoneinfo"));  // a regular file only, never waits
  const long page = ::sysconf(_SC_PAGESIZE);
  if (page > 0) page_bytes_ = static_cast<uint64_t>(page);
  buffer_.resize(64 * 1024);
}

PerCpuFreeReader::~PerCpuFreeReader() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<uint64_t> PerCpuFreeReader::ReadBytes() {
  if (fd_ < 0) return std::nullopt;
  for (;;) {
    // procfs reads of a seq_file return at most a page at a time: read to the end.
    size_t used = 0;
    for (;;) {
      const ssize_t n =
          ::pread(fd_, buffer_.data() + used, buffer_.size() - used, static_cast<off_t>(used));
      if (n < 0) return std::nullopt;
      if (n == 0) break;
      used += static_cast<size_t>(n);
      if (used == buffer_.size()) break;
    }
    if (used < buffer_.size()) {
      const auto pages = ParsePerCpuFreePages(std::string_view(buffer_.data(), used));
      if (!pages) return std::nullopt;
      return *pages * page_bytes_;
    }
    if (buffer_.size() >= kMaxZoneinfoBytes) return std::nullopt;
    buffer_.resize(buffer_.size() * 2);
  }
}

}  // namespace headroom
