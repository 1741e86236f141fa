// Short graphs for `headroom top`: a sparkline (one character per sample, eight heights)
// and the memory bar (used, page cache, free, with the guard's levels marked on it).
// Unicode block elements in a UTF-8 locale, ASCII otherwise, so a vt100 or a C locale still
// gets a readable graph rather than '?' marks.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "top/frame.h"

namespace headroom {

// The range a sparkline is scaled to.
struct GraphRange {
  double lo = 0;
  double hi = 1;
};

// The range of the values present, widened about its middle to at least `min_span` (a
// flat 45 C line stays a flat middle line, not noise blown up to full height) and clamped
// at `floor` below (no negative watts). {floor, floor + min_span} when no value is present.
GraphRange AutoRange(const std::vector<std::optional<double>>& values, double min_span,
                     double floor = 0);

// `width` characters, the newest value rightmost: the last `width` values, right-aligned
// (blank on the left while the history is shorter). A missing value is a blank, a value at
// or below `range.lo` the lowest block ("▁", or "_"), at or above `range.hi` the full one.
std::string Sparkline(const std::vector<std::optional<double>>& values, size_t width,
                      GraphRange range, bool utf8);

// A mark on the memory bar: at `fraction` (0..1) of its width, drawn as `glyph` (one column).
struct BarMark {
  double fraction = 0;
  char glyph = '|';
};

// The memory bar, `width` columns: `used` of the total from the left (solid), then `cache`
// (shaded), then free (dotted); marks over it. Fractions are clamped to 0..1.
std::vector<Span> MemoryBar(size_t width, double used, double cache,
                            const std::vector<BarMark>& marks, bool utf8);

}  // namespace headroom
