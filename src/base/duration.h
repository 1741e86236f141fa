// Durations as users type them: "3s", "500ms", "1.5s", "2m", "1h", "250us"; a bare number
// is seconds.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "base/result.h"

namespace headroom {

// Strictly positive unless allow_zero; at most a week (a guard's grace or a trial's
// timeout past that is a typo).
Result<std::chrono::microseconds> ParseDuration(std::string_view text, bool allow_zero = false);

// A run's length at the precision a person reads it in: "12.3 s" under a minute,
// "4 min 05 s" under an hour, "2 h 03 min" beyond. The units are symbols, the same in every
// language.
std::string FormatElapsed(double seconds);

}  // namespace headroom
