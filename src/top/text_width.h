// Display width of UTF-8 text in terminal columns, for `headroom top`'s layout: a Chinese
// character takes two columns, a combining mark none, so byte counts (and code point counts)
// misplace every column after the first wide character (the zh_TW messages, a user name or a
// command line in any script).
//
// Widths are base/display_width's (DisplayWidth, locale-free); with `utf8` false (a locale
// that is not UTF-8) every non-ASCII code point is drawn as '?' (one column), so the layout
// stays right on a terminal that could not show it anyway. Control characters and bytes that are
// not UTF-8 are '?' in every mode: a process can put an escape sequence into its own command line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/display_width.h"  // DisplayWidth, the columns of TerminalSafe text
#include "base/utf8.h"           // DecodeUtf8, for the callers that walk code points

namespace headroom {

// `text` made safe to draw: control characters, invalid UTF-8 and code points with no
// width become '?'; with `utf8` false, so does every non-ASCII code point.
std::string TerminalSafe(std::string_view text, bool utf8);

// `text` made safe and cut to at most `cols` columns: when it is longer, it ends in an
// ellipsis ("…" with utf8, "~" without) and never splits a wide character (a column left
// over by one is a space).
std::string FitWidth(std::string_view text, size_t cols, bool utf8);

// FitWidth, then padded with spaces to exactly `cols` columns, on the right (left-aligned
// text) or on the left (`align_right`, for numbers).
std::string PadToWidth(std::string_view text, size_t cols, bool utf8, bool align_right = false);

}  // namespace headroom
