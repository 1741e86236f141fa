// Timestamps as training logs print them, parsed without the C library's time functions:
// the arrival prefix of `headroom watch --log` is read on every line, and glibc's timegm
// costs more than the rest of a line's parse, so the date arithmetic is done here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "base/wall_time.h"

namespace headroom {

struct LogTimestamp {
  WallTime time;          // UTC when has_zone; the wall-clock fields read as UTC otherwise
  bool has_zone = false;  // "Z" or a numeric offset followed the time
  size_t length = 0;      // bytes of text the timestamp took
};

// Reads an ISO 8601 timestamp at the start of `text`:
//   YYYY-MM-DD(T| )HH:MM:SS[(.|,)fraction][Z | +HH:MM | -HH:MM | +HHMM | -HHMM]
// The space and the comma cover Python logging's asctime ("2026-06-20 15:38:29,823", as
// axolotl prints it) and Megatron's "[2025-08-01 07:19:37]". Up to 9 fraction digits are
// kept (more are read and dropped). Text after the timestamp is not looked at: `length`
// says where it ended. nullopt when the text does not start with one or a field is out of
// range (a year outside 1900-2199, month 13, Feb 30, hour 24, an offset past 23:59).
std::optional<LogTimestamp> ParseLogTimestamp(std::string_view text);

// Days from 1970-01-01 to a proleptic Gregorian date (negative before), valid for any year
// that fits an int. Howard Hinnant's days_from_civil ("chrono-Compatible Low-Level Date
// Algorithms"): a handful of integer operations, no table and no time zone lookup.
int64_t DaysFromCivil(int64_t year, unsigned month, unsigned day);

}  // namespace headroom
