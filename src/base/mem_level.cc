// Implementation notes: the size goes to ParseBytes (base/bytes.h), so "16G" is 16 GiB here
// as everywhere else; what this file adds is the unit check before it and the strict
// percentage (digits and one point, no strtod: it reads hexadecimal, exponents, "nan" and
// leading blanks).
#include "base/mem_level.h"

#include <cctype>
#include <cmath>
#include <string>

#include "base/bytes.h"
#include "base/message.h"
#include "base/text.h"

namespace headroom {
namespace {

// "8", "0.5", "99.9": digits with at most one point and at least one digit; nullopt else.
std::optional<double> PlainDecimal(std::string_view s) {
  if (s.empty() || s.size() > 32) return std::nullopt;
  double whole = 0;
  double scale = 0;  // 0 before the point, then 0.1, 0.01, ...
  int digits = 0;
  for (char c : s) {
    if (c == '.') {
      if (scale != 0) return std::nullopt;
      scale = 1;
      continue;
    }
    if (c < '0' || c > '9') return std::nullopt;
    ++digits;
    if (scale == 0) {
      whole = whole * 10 + (c - '0');
    } else {
      scale /= 10;
      whole += (c - '0') * scale;
    }
  }
  if (digits == 0) return std::nullopt;
  return whole;
}

}  // namespace

Result<MemLevel> ParseMemLevel(std::string_view text) {
  const std::string_view t = TrimBlanks(text);
  if (t.empty()) return Error{Msg("an empty level: write a size with its unit (8GiB) or 8%")};
  for (const char c : t) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return Error{Msg("a level holds a control character")};
  }
  MemLevel level;
  if (t.back() == '%') {
    // The number runs up to the '%' ("8%"; "8 %" is refused, as config.toml always did).
    const auto pct = PlainDecimal(t.substr(0, t.size() - 1));
    if (!pct || !(*pct > 0) || *pct >= 100) {
      return Error{Msg("'{}' is not a percentage in (0, 100)", text)};
    }
    level.is_percent = true;
    level.percent = *pct;
    return level;
  }
  // A bare number: the last character a digit or the point ("10", "1e9", "4096."). What is no
  // size at all ("0", "-5") says so first.
  if (std::isdigit(static_cast<unsigned char>(t.back())) || t.back() == '.') {
    if (auto bytes = ParseBytes(t); !bytes) return bytes.error();
    return Error{
        Msg("'{}' has no unit: a level needs one (8GiB, 512MiB, 100GB) or a "
            "percentage of MemTotal (8%)",
            text)};
  }
  auto bytes = ParseBytes(t);
  if (!bytes) return bytes.error();
  level.bytes = *bytes;
  return level;
}

uint64_t MemLevelBytes(const MemLevel& level, uint64_t mem_total_bytes) {
  if (!level.is_percent) return level.bytes;
  return static_cast<uint64_t>(level.percent / 100.0 * static_cast<double>(mem_total_bytes));
}

Result<uint64_t> MemLevelBelowTotal(const MemLevel& level, uint64_t mem_total_bytes,
                                    std::string_view text) {
  const uint64_t bytes = MemLevelBytes(level, mem_total_bytes);
  if (mem_total_bytes > 0 && bytes >= mem_total_bytes) {
    return Error{Msg("'{}' ({}) is not below MemTotal ({}): MemAvailable is always under it", text,
                     FormatGiB(bytes), FormatGiB(mem_total_bytes))};
  }
  // A percentage of a small MemTotal can truncate to 0 bytes: a level that never fires.
  if (bytes == 0) return Error{Msg("'{}' is zero bytes on this machine", text)};
  return bytes;
}

}  // namespace headroom
