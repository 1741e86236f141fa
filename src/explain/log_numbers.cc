// Implementation notes: std::from_chars for every number (no locale, no allocation, no errno;
// g++ 12's floating-point from_chars is the fast_float algorithm, exact to the last bit).
// Integers are read digit by digit with an overflow check, since a step count that does not
// fit must be refused rather than wrapped.
#include <charconv>
#include <limits>

#include "explain/log_formats.h"

namespace headroom::step_log {

std::optional<int64_t> ToCount(std::string_view s) {
  // INT64_MAX has 19 digits. (A 20-digit text with leading zeros would fit; no log prints
  // one, so it is refused with the rest.)
  if (s.empty() || s.size() > 19) return std::nullopt;
  int64_t value = 0;
  for (char c : s) {
    if (!IsDigit(c)) return std::nullopt;
    const int digit = c - '0';
    if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
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
    case 'k': scale = 1e3; break;
    case 'M': scale = 1e6; break;
    case 'G': scale = 1e9; break;
    case 'T': scale = 1e12; break;
    case 'P': scale = 1e15; break;
    case 'E': scale = 1e18; break;
    case 'Z': scale = 1e21; break;
    case 'Y': scale = 1e24; break;
    default: break;
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
  // Up to three ':'-separated fields; all but the first are exactly two digits below 60.
  double seconds = 0;
  int fields = 0;
  while (true) {
    const size_t colon = s.find(':');
    const std::string_view field = s.substr(0, colon);
    if (fields > 0 && (field.size() != 2 || !IsDigit(field[0]) || field[0] > '5')) {
      return std::nullopt;
    }
    const std::optional<int64_t> v = ToCount(field);
    if (!v || *v > 1'000'000'000) return std::nullopt;  // a billion hours: refuse, not overflow
    seconds = seconds * 60 + static_cast<double>(*v);
    ++fields;
    if (colon == std::string_view::npos) break;
    if (fields == 3) return std::nullopt;
    s.remove_prefix(colon + 1);
  }
  if (fields < 2) return std::nullopt;
  return seconds;
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
