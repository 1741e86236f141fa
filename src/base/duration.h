// Durations as users type them: "3s", "500ms", "1.5s", "2m", "1h", "250us"; a bare number
// is seconds.
#pragma once

#include <chrono>
#include <string_view>

#include "base/result.h"

namespace headroom {

// Strictly positive unless allow_zero; at most a week (a guard's grace or a trial's
// timeout past that is a typo).
Result<std::chrono::microseconds> ParseDuration(std::string_view text, bool allow_zero = false);

}  // namespace headroom
