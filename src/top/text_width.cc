// Implementation notes. The decoder is written out rather than taken from mbrtowc so that
// it does not depend on the locale (the fixture tests run in "C") and so a bad byte costs
// one '?' rather than the rest of the string. The widths of the code points that decoded
// cleanly are base/display_width's table (the East Asian wide and fullwidth ranges glibc's
// wcwidth also gives 2, combining marks 0), the one table every aligned text uses.
#include "top/text_width.h"

#include "base/display_width.h"
#include "base/utf8.h"

namespace headroom {
namespace {

// The columns of one decoded code point; -1 when it is not drawable.
int CodePointColumns(char32_t c) {
  if (c < 0x20 || c == 0x7F) return -1;  // C0 controls and DEL
  if (c < 0x7F) return 1;                // ASCII needs no table
  if (c >= 0x80 && c < 0xA0) return -1;  // C1 controls (a lone 0x9B is CSI on some terminals)
  return CodePointWidth(c);
}

}  // namespace

std::string TerminalSafe(std::string_view text, bool utf8) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t start = pos;
    const char32_t c = DecodeUtf8(text, pos);
    const bool bad = c == kReplacementCharacter &&
                     !(pos - start == 3 && text.substr(start, 3) == "\xEF\xBF\xBD");
    if (bad || CodePointColumns(c) < 0 || (!utf8 && c >= 0x80)) {
      out += '?';
    } else {
      AppendUtf8(out, c);
    }
  }
  return out;
}

std::string FitWidth(std::string_view text, size_t cols, bool utf8) {
  std::string safe = TerminalSafe(text, utf8);
  if (DisplayWidth(safe) <= cols) return safe;
  if (cols == 0) return {};
  const std::string_view ellipsis = utf8 ? "\xE2\x80\xA6" : "~";  // U+2026, one column
  const size_t budget = cols - 1;
  std::string out;
  size_t used = 0;
  for (size_t pos = 0; pos < safe.size();) {
    const size_t start = pos;
    const int w = CodePointColumns(DecodeUtf8(safe, pos));
    const size_t width = w > 0 ? static_cast<size_t>(w) : 0;
    if (used + width > budget) break;
    out.append(safe, start, pos - start);
    used += width;
  }
  // A wide character that did not fit leaves a column: filled, so the width is exact.
  out.append(budget - used, ' ');
  out += ellipsis;
  return out;
}

std::string PadToWidth(std::string_view text, size_t cols, bool utf8, bool align_right) {
  std::string fitted = FitWidth(text, cols, utf8);
  const size_t pad = cols - DisplayWidth(fitted);
  if (align_right) return std::string(pad, ' ') + fitted;
  fitted.append(pad, ' ');
  return fitted;
}

}  // namespace headroom
