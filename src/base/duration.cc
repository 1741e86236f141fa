#include "base/duration.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "base/message.h"

namespace headroom {

Result<std::chrono::microseconds> ParseDuration(std::string_view text, bool allow_zero) {
  const std::string s(text);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end == s.c_str() || errno == ERANGE || !std::isfinite(v) ||
      (!s.empty() && (s[0] == ' ' || s[0] == '+'))) {
    return Error{Msg("'{}' is not a duration (examples: 3s, 500ms, 2m)", text)};
  }
  const std::string unit(end);
  double scale = 0;  // microseconds per unit
  if (unit.empty() || unit == "s")
    scale = 1e6;
  else if (unit == "ms")
    scale = 1e3;
  else if (unit == "us")
    scale = 1;
  else if (unit == "m" || unit == "min")
    scale = 60e6;
  else if (unit == "h")
    scale = 3600e6;
  else
    return Error{Msg("'{}' has an unknown unit '{}' (use us, ms, s, m, h)", text, unit)};
  if (v < 0) return Error{Msg("'{}' is negative", text)};
  const double us = std::round(v * scale);
  if (us == 0 && !allow_zero) return Error{Msg("'{}' is zero", text)};
  if (us > 7 * 24 * 3600e6) return Error{Msg("'{}' is longer than a week", text)};
  return std::chrono::microseconds(static_cast<int64_t>(us));
}

std::string FormatElapsed(double seconds) {
  if (seconds < 60) return fmt::format("{:.1f} s", seconds);
  const auto whole = static_cast<long long>(seconds);
  if (whole < 3600) return fmt::format("{} min {:02} s", whole / 60, whole % 60);
  return fmt::format("{} h {:02} min", whole / 3600, whole / 60 % 60);
}

}  // namespace headroom
