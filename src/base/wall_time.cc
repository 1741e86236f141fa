#include "base/wall_time.h"

#include <fmt/format.h>
#include <time.h>

#include <charconv>
#include <cstdint>

namespace headroom {
namespace {

// Reads exactly `digits` decimal digits at text[pos]; nullopt if any is not a digit.
std::optional<int> Digits(std::string_view text, size_t pos, size_t digits) {
  if (pos + digits > text.size()) return std::nullopt;
  int value = 0;
  for (size_t i = pos; i < pos + digits; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

}  // namespace

std::string FormatUtcIso8601(WallTime t) {
  using namespace std::chrono;
  // floor, not duration_cast: a time before 1970 must not round toward the epoch.
  const auto ms = floor<milliseconds>(t.time_since_epoch()).count();
  const time_t secs = static_cast<time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  const long millis = static_cast<long>(ms - static_cast<long long>(secs) * 1000);
  tm u{};
  gmtime_r(&secs, &u);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", u.tm_year + 1900, u.tm_mon + 1,
                     u.tm_mday, u.tm_hour, u.tm_min, u.tm_sec, millis);
}

std::optional<WallTime> ParseUtcIso8601(std::string_view text) {
  // Fixed positions: YYYY-MM-DDTHH:MM:SS is 19 characters.
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' ||
      text[16] != ':' || text.back() != 'Z') {
    return std::nullopt;
  }
  const auto year = Digits(text, 0, 4), month = Digits(text, 5, 2), day = Digits(text, 8, 2);
  const auto hour = Digits(text, 11, 2), minute = Digits(text, 14, 2), second = Digits(text, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second) return std::nullopt;
  if (*month < 1 || *month > 12 || *day < 1 || *day > 31 || *hour > 23 || *minute > 59 ||
      *second > 59) {
    return std::nullopt;
  }
  std::chrono::nanoseconds fraction{0};
  std::string_view rest = text.substr(19, text.size() - 20);
  if (!rest.empty()) {
    if (rest[0] != '.' || rest.size() < 2) return std::nullopt;
    long long scale = 100'000'000;  // nanoseconds per digit of the first fractional place
    for (char c : rest.substr(1)) {
      if (c < '0' || c > '9') return std::nullopt;
      fraction += std::chrono::nanoseconds((c - '0') * scale);
      scale /= 10;
    }
  }
  tm u{};
  u.tm_year = *year - 1900;
  u.tm_mon = *month - 1;
  u.tm_mday = *day;
  u.tm_hour = *hour;
  u.tm_min = *minute;
  u.tm_sec = *second;
  const time_t secs = timegm(&u);
  // timegm normalises "Feb 31" to March 3; a date that comes back changed did not exist.
  if (u.tm_mday != *day || u.tm_mon != *month - 1) return std::nullopt;
  // Seconds whose nanoseconds fit an int64 with a day to spare, so that the conversion below
  // and an offset applied after it stay defined (a year 1000 or 9999 overflowed).
  // A WallTime holds 1677-09-21 to 2262-04-11; 1677-09-22 to 2262-04-10 are read.
  constexpr time_t kLimitSeconds = INT64_MAX / 1'000'000'000 - 86'400;
  if (secs < -kLimitSeconds || secs > kLimitSeconds) return std::nullopt;
  return WallTime(
      std::chrono::duration_cast<WallTime::duration>(std::chrono::seconds(secs) + fraction));
}

std::string FormatIso8601WithOffset(WallTime t) {
  std::string text = FormatUtcIso8601(t);  // "...Z"
  text.pop_back();
  text += "+00:00";
  return text;
}

std::optional<WallTime> ParseIso8601WithOffset(std::string_view text) {
  if (text.size() < 20 || text.size() > 64) return std::nullopt;
  if (text.back() == 'Z') return ParseUtcIso8601(text);
  // The offset: the last '+' or '-' after the time's seconds (position 19 on).
  const size_t sign = text.find_last_of("+-");
  if (sign == std::string_view::npos || sign < 19) return std::nullopt;
  std::string_view off = text.substr(sign + 1);
  int hours = 0, minutes = 0;
  auto two = [](std::string_view d, int& out) {
    if (d.size() != 2 || d[0] < '0' || d[0] > '9' || d[1] < '0' || d[1] > '9') return false;
    out = (d[0] - '0') * 10 + (d[1] - '0');
    return true;
  };
  if (off.size() == 5 && off[2] == ':') {
    if (!two(off.substr(0, 2), hours) || !two(off.substr(3, 2), minutes)) return std::nullopt;
  } else if (off.size() == 4) {
    if (!two(off.substr(0, 2), hours) || !two(off.substr(2, 2), minutes)) return std::nullopt;
  } else if (off.size() == 2) {
    if (!two(off, hours)) return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (hours > 23 || minutes > 59) return std::nullopt;
  std::string utc(text.substr(0, sign));
  utc += 'Z';
  auto local = ParseUtcIso8601(utc);
  if (!local) return std::nullopt;
  const auto offset = std::chrono::minutes(hours * 60 + minutes);
  // Local time = UTC + offset, so UTC = local - offset.
  return text[sign] == '+' ? *local - offset : *local + offset;
}

}  // namespace headroom
