// Implementation notes: fixed-position reads of the digits (the layout is fixed by the
// standard), then DaysFromCivil instead of timegm. Validity of the day is checked against the
// month's length, leap years included, because timegm's normalisation (Feb 31 -> Mar 3) is
// exactly what a log parser must not do silently.
#include "explain/log_time.h"

#include <chrono>

#include "explain/log_formats.h"

namespace headroom {
namespace {

using step_log::IsDigit;

// Exactly `n` digits at text[pos], or -1.
int Digits(std::string_view text, size_t pos, size_t n) {
  if (pos + n > text.size()) return -1;
  int value = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!IsDigit(text[i])) return -1;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

unsigned DaysInMonth(int year, int month) {
  static constexpr unsigned char kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

}  // namespace

int64_t DaysFromCivil(int64_t year, unsigned month, unsigned day) {
  year -= month <= 2;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(year - era * 400);                        // [0, 399]
  const unsigned doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;  // [0, 365]
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;  // [0, 146096]
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

std::optional<LogTimestamp> ParseLogTimestamp(std::string_view text) {
  // "YYYY-MM-DDTHH:MM:SS" is 19 bytes at fixed positions.
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' ||
      (text[10] != 'T' && text[10] != ' ') || text[13] != ':' || text[16] != ':') {
    return std::nullopt;
  }
  const int year = Digits(text, 0, 4), month = Digits(text, 5, 2), day = Digits(text, 8, 2);
  const int hour = Digits(text, 11, 2), minute = Digits(text, 14, 2), second = Digits(text, 17, 2);
  // Years 1900-2199 only: a WallTime counts nanoseconds in an int64 (1678 to 2262), and a
  // log stamped "0026-..." is a typo to refuse, not a time to overflow.
  if (year < 1900 || year > 2199 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 ||
      minute < 0 || minute > 59 || second < 0 ||
      second > 60) {  // 60: a leap second, as ISO 8601 allows
    return std::nullopt;
  }
  if (static_cast<unsigned>(day) > DaysInMonth(year, month)) return std::nullopt;

  size_t pos = 19;
  int64_t nanos = 0;
  if (pos < text.size() && (text[pos] == '.' || text[pos] == ',')) {
    size_t digits = 0;
    int64_t scale = 100'000'000;  // nanoseconds per unit of the first fractional digit
    for (++pos; pos < text.size() && IsDigit(text[pos]); ++pos, ++digits) {
      nanos += (text[pos] - '0') * scale;
      scale /= 10;  // reaches 0 after the 9th digit: later digits are read and dropped
    }
    if (digits == 0) return std::nullopt;  // "12:00:00." is not a time
  }

  int64_t offset_seconds = 0;
  bool has_zone = false;
  if (pos < text.size() && text[pos] == 'Z') {
    has_zone = true;
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    // "+HH:MM" or "+HHMM"; a sign followed by anything else is left for the caller (a
    // Megatron line goes on with " | ...", never with a bare sign).
    const int oh = Digits(text, pos + 1, 2);
    const bool colon = pos + 3 < text.size() && text[pos + 3] == ':';
    const int om = Digits(text, pos + (colon ? 4 : 3), 2);
    if (oh >= 0 && om >= 0) {
      if (oh > 23 || om > 59) return std::nullopt;
      offset_seconds = (oh * 3600 + om * 60) * (text[pos] == '-' ? -1 : 1);
      has_zone = true;
      pos += colon ? 6 : 5;
    }
  }

  const int64_t days =
      DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  const int64_t seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset_seconds;
  const auto since_epoch = std::chrono::seconds(seconds) + std::chrono::nanoseconds(nanos);
  return LogTimestamp{WallTime(std::chrono::duration_cast<WallTime::duration>(since_epoch)),
                      has_zone, pos};
}

}  // namespace headroom
