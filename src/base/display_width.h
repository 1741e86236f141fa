// Terminal columns of UTF-8 text, for anything that lines text up on a terminal: TextTable's
// columns, the help screens' first column (cli/cli11_i18n), doctor's verdict field. A
// translated word (two CJK characters: six bytes, four columns) pads by what the terminal
// draws, never by bytes or code points.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace headroom {

// Columns a terminal gives UTF-8 `text`: East Asian wide and fullwidth characters (CJK,
// Hangul, kana, fullwidth punctuation) and the emoji blocks take two, combining marks and
// zero-width characters none, everything else one; a byte that does not start a valid
// sequence counts one. Locale-free, so a table lines up whatever LC_CTYPE says.
size_t DisplayWidth(std::string_view text);

// The columns of one code point, by the same table: 0, 1 or 2 (a control character counts
// one here; top/text_width.h replaces those before it measures).
int CodePointWidth(char32_t c);

// `text` followed by spaces up to `columns` display columns (none when it is wider).
std::string PadToWidth(std::string_view text, size_t columns);

}  // namespace headroom
