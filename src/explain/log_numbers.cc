// Implementation notes: std::from_chars for every number (no locale, no allocation, no errno;
// g++ 12's floating-point from_chars is the fast_float algorithm, exact to the last bit).
// Integers are read digit by digit and range-checked, since a step count that does not fit
// must be refused rather than wrapped.
#include <charconv>
#include <limits>

#include "explain/log_formats.h"

namespace headroom::step_log {

std::optional<int64_t> ToCount(std::string_view s) {
  // INT64_MAX has 19 digits. (A 20-digit text with leading zeros would fit; no log prints
  // one, so it is refused with the rest.) Up to 18 digits cannot overflow, so the check costs
  // one compare at the end instead of a division per digit (this runs several times a line).
  if (s.empty() || s.size() > 19) return std::nullopt;
  uint64_t value = 0;
  for (char c : s) {
    const unsigned digit = static_cast<unsigned char>(c) - '0';
    if (digit > 9) return std::nullopt;
    value = value * 10 + digit;  // < 10^19 < 2^64: no wrap
  }
  if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return static_cast<int64_t>(value);
}

std::optional<double> ToDouble(std::string_view s) {
  if (s.size() > 1 && s[0] == '+' && s[1] != '-' && s[1] != '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  double value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

std::optional<double> ToScaled(std::string_view s) {
  if (s.empty()) return std::nullopt;
  double scale = 1;
  switch (s.back()) {
    case 'k':
      scale = 1e3;
      break;
    case 'M':
      scale = 1e6;
      break;
    case 'G':
      scale = 1e9;
      break;
    case 'T':
      scale = 1e12;
      break;
    case 'P':
      scale = 1e15;
      break;
    case 'E':
      scale = 1e18;
      break;
    case 'Z':
      scale = 1e21;
      break;
    case 'Y':
      scale = 1e24;
      break;
    default:
      break;
  }
  if (scale != 1) s.remove_suffix(1);
  // tqdm prints plain decimals here; refuse what from_chars alone would take (nan, 1e5).
  for (char c : s) {
    if (!IsDigit(c) && c != '.') return std::nullopt;
  }
  const std::optional<double> v = ToDouble(s);
  if (!v) return std::nullopt;
  return *v * scale;
}

std::optional<double> ToClockSeconds(std::string_view s) {
  // One pass: up to 10 digits of the first field, then one or two ":NN" fields below 60.
  // (Every tqdm bar has two or three of these, so this avoids the find/substr of a general
  // split.)
  size_t p = 0;
  int64_t value = 0;
  while (p < s.size() && p < 10 && IsDigit(s[p])) value = value * 10 + (s[p++] - '0');
  if (p == 0) return std::nullopt;
  int fields = 1;
  while (p < s.size()) {
    if (fields == 3 || p + 3 > s.size() || s[p] != ':' || !IsDigit(s[p + 1]) || s[p + 1] > '5' ||
        !IsDigit(s[p + 2])) {
      return std::nullopt;
    }
    value = value * 60 + (s[p + 1] - '0') * 10 + (s[p + 2] - '0');
    p += 3;
    ++fields;
  }
  if (fields < 2) return std::nullopt;
  return static_cast<double>(value);
}

uint64_t HashLetters(uint64_t h, std::string_view s) {
  for (char c : s) {
    if (IsAsciiLetter(c)) {
      h ^= static_cast<unsigned char>(c);
      h *= 0x100000001B3ULL;
    }
  }
  return h;
}

}  // namespace headroom::step_log
