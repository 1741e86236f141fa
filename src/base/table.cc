#include "base/table.h"

#include <algorithm>

namespace headroom {
namespace {

// East Asian Wide and Fullwidth code points take two terminal columns (Unicode UAX #11;
// the blocks the zh_TW messages use: CJK ideographs, CJK and full-width punctuation, kana,
// Hangul). The ranges are those glibc's wcwidth gives 2 for, coarsened to whole blocks.
bool IsWide(char32_t c) {
  return (c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0x303E) || (c >= 0x3041 && c <= 0x33FF) ||
         (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xA000 && c <= 0xA4CF) ||
         (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFE30 && c <= 0xFE4F) ||
         (c >= 0xFF00 && c <= 0xFF60) || (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x20000 && c <= 0x3FFFD);
}

// Display width of UTF-8 text in terminal columns: one per code point (continuation bytes
// don't count), two for a wide one. Malformed bytes count one each.
size_t Width(const std::string& s) {
  size_t width = 0;
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 1;
    char32_t c = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
    size_t k = 1;
    for (; k < n && i + k < s.size() && (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80; ++k) {
      c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    }
    width += k == n && IsWide(c) ? 2 : 1;
    i += k;
  }
  return width;
}

}  // namespace

std::string TextTable::Render(size_t indent) const {
  std::vector<size_t> widths(aligns_.size(), 0);
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], Width(row[i]));
    }
  }
  size_t total = 0;
  for (size_t w : widths) total += w + 2;
  std::string out;
  for (const auto& row : rows_) {
    std::string line(indent, ' ');
    if (row.empty()) {
      // A rule spans the table but stops at 80 columns: long formula cells would otherwise
      // draw a line wider than most terminals.
      line += std::string(std::min<size_t>(total > 2 ? total - 2 : 0, 80), '-');
    } else {
      for (size_t i = 0; i < widths.size(); ++i) {
        const std::string cell = i < row.size() ? row[i] : "";
        const std::string pad(widths[i] - Width(cell), ' ');
        line += aligns_[i] == Align::kRight ? pad + cell : cell + pad;
        if (i + 1 < widths.size()) line += "  ";
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace headroom
