// Wall-clock timestamps as text: ISO-8601 in UTC with milliseconds,
// "2025-03-14T09:26:53.589Z", the form guard events already write. Text that sorts in time
// order and reads the same on every host, whatever its time zone.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace headroom {

using WallTime = std::chrono::system_clock::time_point;

// "YYYY-MM-DDTHH:MM:SS.mmmZ" (milliseconds truncated).
std::string FormatUtcIso8601(WallTime t);

// Accepts "YYYY-MM-DDTHH:MM:SS" with an optional fraction (any number of digits) and a
// required "Z". nullopt for anything else, including fields out of range.
std::optional<WallTime> ParseUtcIso8601(std::string_view text);

// "2026-11-29T10:00:00.123+00:00": UTC, milliseconds, an explicit offset.
std::string FormatIso8601WithOffset(WallTime t);
// ISO 8601 with "Z" or a numeric offset ("+00:00", "-0530"), any number of fraction digits.
std::optional<WallTime> ParseIso8601WithOffset(std::string_view text);

}  // namespace headroom
