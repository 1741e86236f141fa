// Implementation notes: parsing is hand-rolled over std::from_chars-style scanning so that
// no locale, no exceptions and no partial numbers ("12abc") slip through. Sizes are
// computed in long double and checked against 2^63 before the cast: a uint64 overflow on
// "99999999999T" must be an error, not a wrapped small number.
#include "base/bytes.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

#include "base/message.h"
#include "base/text.h"

namespace headroom {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits "1.5GiB" into a number and a suffix. The number may use a decimal point and an
// exponent ("1.5e9"); the suffix is the rest with spaces removed.
bool SplitNumber(std::string_view text, long double* number, std::string* suffix) {
  size_t i = 0;
  auto digit = [&](size_t k) { return k < text.size() && std::isdigit((unsigned char)text[k]); };
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  size_t digits = 0;
  while (digit(i)) ++i, ++digits;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (digit(i)) ++i, ++digits;
  }
  if (digits == 0) return false;
  // An exponent only when digits follow it, so "1E" is not eaten (E is no unit anyway).
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    size_t j = i + 1;
    if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
    if (digit(j)) {
      i = j;
      while (digit(i)) ++i;
    }
  }
  std::string num(text.substr(0, i));
  char* end = nullptr;
  errno = 0;
  *number = std::strtold(num.c_str(), &end);
  if (end != num.c_str() + num.size() || errno == ERANGE) return false;
  suffix->clear();
  for (char c : text.substr(i)) {
    if (!std::isspace(static_cast<unsigned char>(c))) suffix->push_back(c);
  }
  return true;
}

}  // namespace

Result<uint64_t> ParseBytes(std::string_view text, bool allow_zero) {
  std::string_view t = Trim(text);
  long double number = 0;
  std::string suffix;
  if (t.empty()) return Error{Msg("empty size")};
  if (!SplitNumber(t, &number, &suffix) || !std::isfinite(number)) {
    return Error{Msg("'{}' is not a size (examples: 16G, 16GiB, 100GB, 1.5T)", text)};
  }
  if (number < 0) return Error{Msg("'{}' is negative", text)};
  const std::string s = AsciiLower(suffix);
  long double mult = 0;
  // Binary: bare letter, "ib" forms. Decimal: "b" forms without the i.
  if (s.empty() || s == "b")
    mult = 1;
  else if (s == "k" || s == "kib")
    mult = static_cast<long double>(kKiB);
  else if (s == "m" || s == "mib")
    mult = static_cast<long double>(kMiB);
  else if (s == "g" || s == "gib")
    mult = static_cast<long double>(kGiB);
  else if (s == "t" || s == "tib")
    mult = static_cast<long double>(kTiB);
  else if (s == "kb")
    mult = 1e3L;
  else if (s == "mb")
    mult = 1e6L;
  else if (s == "gb")
    mult = 1e9L;
  else if (s == "tb")
    mult = 1e12L;
  else {
    return Error{
        Msg("'{}' has an unknown unit '{}' (use K, M, G, T, KiB..TiB, KB..TB)", text, suffix)};
  }
  const long double bytes = std::round(number * mult);
  if (bytes >= 9.2e18L) return Error{Msg("'{}' is too large", text)};
  if (bytes == 0 && !allow_zero) return Error{Msg("'{}' is zero", text)};
  return static_cast<uint64_t>(bytes);
}

Result<uint64_t> ParseParamCount(std::string_view text) {
  std::string_view t = Trim(text);
  long double number = 0;
  std::string suffix;
  if (t.empty()) return Error{Msg("empty parameter count")};
  if (!SplitNumber(t, &number, &suffix) || !std::isfinite(number)) {
    return Error{Msg("'{}' is not a parameter count (examples: 70B, 350M, 1.5e9)", text)};
  }
  if (number <= 0) return Error{Msg("'{}' must be positive", text)};
  const std::string s = AsciiLower(suffix);
  long double mult = 0;
  if (s.empty())
    mult = 1;
  else if (s == "k")
    mult = 1e3L;
  else if (s == "m")
    mult = 1e6L;
  else if (s == "b" || s == "g")
    mult = 1e9L;
  else if (s == "t")
    mult = 1e12L;
  else
    return Error{Msg("'{}' has an unknown suffix '{}' (use K, M, B, T)", text, suffix)};
  const long double params = std::round(number * mult);
  if (params < 1) return Error{Msg("'{}' is less than one parameter", text)};
  if (params >= 1e16L) return Error{Msg("'{}' is too large", text)};
  return static_cast<uint64_t>(params);
}

Result<int64_t> ParsePositiveInt(std::string_view text) {
  std::string_view t = Trim(text);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size()) {
    return Error{Msg("'{}' is not a whole number", text)};
  }
  if (v <= 0) return Error{Msg("'{}' must be at least 1", text)};
  return v;
}

std::string FormatGiB(uint64_t bytes) {
  return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / static_cast<double>(kGiB));
}

std::string FormatGB(uint64_t bytes) {
  return fmt::format("{:.2f} GB", static_cast<double>(bytes) / 1e9);
}

std::string FormatBoth(uint64_t bytes) {
  return fmt::format("{} ({})", FormatGB(bytes), FormatGiB(bytes));
}

std::string FormatParamCount(uint64_t params) {
  const double p = static_cast<double>(params);
  if (p >= 1e12) return fmt::format("{:.2f}T", p / 1e12);
  if (p >= 1e9) return fmt::format("{:.2f}B", p / 1e9);
  if (p >= 1e6) return fmt::format("{:.3g}M", p / 1e6);
  if (p >= 1e3) return fmt::format("{:.3g}K", p / 1e3);
  return fmt::format("{}", params);
}

}  // namespace headroom
