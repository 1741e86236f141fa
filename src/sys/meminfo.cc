// Implementation notes.
//
// A line is "<key>:<spaces><digits>[ kB]". fs/proc/meminfo.c prints the key padded to 16
// columns and the value right-aligned in 8 (show_val_kb), and hugetlb_report_meminfo prints
// the HugePages_* counts with no unit, so the parser splits at the first colon and trims
// spaces rather than trusting columns. '\r' counts as trailing space, so a file saved with
// CRLF endings still parses. Everything else that does not fit (a negative number, as
// Committed_AS has shown on some kernels when its per-CPU counter drifted; a unit other than
// kB; a value past uint64 after x1024; a key with spaces or over kMaxKeyLength) is skipped and
// counted in malformed_lines(). ParseValue is shared with ParseMemAvailableFast so that the
// two readers cannot disagree about what a well-formed value is.
#include "sys/meminfo.h"

#include <charconv>
#include <limits>

#include "base/bytes.h"
#include "base/message.h"
#include "base/text.h"

namespace headroom {
namespace {

// The longest key printed today is "HardwareCorrupted" (17 characters); 64 leaves
// room for new fields while refusing to store a hostile 10,000-character "key".
constexpr size_t kMaxKeyLength = 64;

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  return s;
}

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

// The text after the colon: digits, then an optional "kB", then nothing but blanks.
// std::from_chars on an unsigned type takes no sign, so "-12" and "+12" fail here.
std::optional<MemInfoField> ParseValue(std::string_view rest) {
  rest = TrimRight(TrimLeft(rest));
  uint64_t value = 0;
  const char* begin = rest.data();
  const char* end = rest.data() + rest.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr == begin) return std::nullopt;
  std::string_view unit = TrimLeft(std::string_view(ptr, static_cast<size_t>(end - ptr)));
  if (unit.empty()) return MemInfoField{value, /*in_bytes=*/false};
  if (unit != "kB") return std::nullopt;
  if (value > kMax / kKiB) return std::nullopt;
  return MemInfoField{value * kKiB, /*in_bytes=*/true};
}

// A key is what the kernel prints: letters, digits, '_', '(' and ')' in practice. Anything
// printable without spaces is accepted so a new kernel's field is kept, not dropped.
bool IsValidKey(std::string_view key) {
  if (key.empty() || key.size() > kMaxKeyLength) return false;
  for (const char c : key) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= ' ' || u >= 0x7f) return false;
  }
  return true;
}

uint64_t SaturatingAdd(uint64_t a, uint64_t b) { return b > kMax - a ? kMax : a + b; }

}  // namespace

std::optional<uint64_t> MemInfo::Get(std::string_view key) const {
  const auto it = fields_.find(key);
  if (it == fields_.end()) return std::nullopt;
  return it->second.value;
}

std::optional<uint64_t> MemInfo::reclaimable_page_cache_bytes() const {
  const auto cached = cached_bytes();
  if (!cached) return std::nullopt;
  uint64_t sum = SaturatingAdd(*cached, buffers_bytes().value_or(0));
  sum = SaturatingAdd(sum, sreclaimable_bytes().value_or(0));
  const uint64_t shmem = shmem_bytes().value_or(0);
  return sum > shmem ? sum - shmem : 0;
}

std::optional<AvailableEstimate> MemInfo::EstimatedAvailable() const {
  if (const auto available = available_bytes()) {
    return AvailableEstimate{*available, kMemAvailableSourceKernel};
  }
  const auto free = free_bytes();
  if (!free) return std::nullopt;
  // si_mem_available() without its watermark terms (see the header). Active(file) and
  // Inactive(file) exist since 2.6.28; on anything older they count as 0 and the estimate
  // falls back towards MemFree, which errs on the safe side.
  uint64_t bytes = SaturatingAdd(*free, Get("Active(file)").value_or(0));
  bytes = SaturatingAdd(bytes, Get("Inactive(file)").value_or(0));
  bytes = SaturatingAdd(bytes, sreclaimable_bytes().value_or(0));
  if (const auto total = total_bytes(); total && bytes > *total) bytes = *total;
  return AvailableEstimate{bytes, kMemAvailableSourceEstimated};
}

MemInfo ParseMemInfo(std::string_view text) {
  MemInfo info;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (TrimLeft(line).empty()) continue;  // blank lines are not errors

    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || !IsValidKey(line.substr(0, colon))) {
      ++info.malformed_lines_;
      continue;
    }
    const auto field = ParseValue(line.substr(colon + 1));
    if (!field) {
      ++info.malformed_lines_;
      continue;
    }
    // try_emplace keeps the first value: the kernel never repeats a key, so a repeat is
    // corruption, and the first one is what ParseMemAvailableFast returns too.
    if (!info.fields_.try_emplace(std::string(line.substr(0, colon)), *field).second) {
      ++info.duplicate_lines_;
    }
  }
  return info;
}

std::optional<uint64_t> ParseMemAvailableFast(std::string_view text) {
  constexpr std::string_view kPrefix = "MemAvailable:";
  size_t pos = 0;
  while ((pos = text.find(kPrefix, pos)) != std::string_view::npos) {
    // Only a match at the start of a line is the key; "XMemAvailable:" is another key.
    if (pos == 0 || text[pos - 1] == '\n') {
      const size_t value_begin = pos + kPrefix.size();
      const size_t newline = text.find('\n', value_begin);
      const size_t value_end = newline == std::string_view::npos ? text.size() : newline;
      if (const auto field = ParseValue(text.substr(value_begin, value_end - value_begin))) {
        return field->value;
      }
    }
    pos += kPrefix.size();
  }
  return std::nullopt;
}

Result<MemInfo> ReadMemInfo(const SysRoot& root) {
  constexpr std::string_view kRelative = "proc/meminfo";
  auto text = root.ReadFile(kRelative);
  if (!text) return text.error();
  MemInfo info = ParseMemInfo(*text);
  if (!info.total_bytes()) {
    return Error{Msg("cannot read {}: parse: no valid MemTotal line, not a meminfo file",
                     root.Path(kRelative).string())};
  }
  return info;
}

}  // namespace headroom
