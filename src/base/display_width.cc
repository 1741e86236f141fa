// Implementation notes: the widths are Markus Kuhn's wcwidth ranges (the East Asian Wide
// and Fullwidth blocks of Unicode UAX #11, as glibc's wcwidth gives 2 for them), plus the
// emoji blocks terminals draw two columns wide; combining diacritics, zero-width spaces and
// joiners, and variation selectors take none. A table of ranges rather than wcwidth(3):
// wcwidth depends on LC_CTYPE, which is "C" for a user without a UTF-8 locale.
#include "base/display_width.h"

#include "base/utf8.h"

namespace headroom {

int CodePointWidth(char32_t c) {
  if ((c >= 0x0300 && c <= 0x036F) || (c >= 0x200B && c <= 0x200F) ||
      (c >= 0x20D0 && c <= 0x20FF) || (c >= 0xFE00 && c <= 0xFE0F)) {
    return 0;
  }
  const bool wide =
      c >= 0x1100 &&
      (c <= 0x115F || c == 0x2329 || c == 0x232A || (c >= 0x2E80 && c <= 0xA4CF && c != 0x303F) ||
       (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) ||
       (c >= 0xFE10 && c <= 0xFE19) || (c >= 0xFE30 && c <= 0xFE6F) ||
       (c >= 0xFF00 && c <= 0xFF60) || (c >= 0xFFE0 && c <= 0xFFE6) ||
       (c >= 0x1F300 && c <= 0x1F64F) || (c >= 0x1F900 && c <= 0x1F9FF) ||
       (c >= 0x20000 && c <= 0x2FFFD) || (c >= 0x30000 && c <= 0x3FFFD));
  return wide ? 2 : 1;
}

size_t DisplayWidth(std::string_view text) {
  size_t width = 0;
  for (size_t i = 0; i < text.size();)
    width += CodePointWidth(DecodeUtf8(text, i));  // a bad byte: U+FFFD, one column
  return width;
}

std::string PadToWidth(std::string_view text, size_t columns) {
  std::string out(text);
  const size_t width = DisplayWidth(text);
  if (width < columns) out.append(columns - width, ' ');
  return out;
}

}  // namespace headroom
