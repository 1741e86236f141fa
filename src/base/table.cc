#include "base/table.h"

#include <algorithm>

#include "base/display_width.h"

namespace headroom {

std::string TextTable::Render(size_t indent) const {
  std::vector<size_t> widths(aligns_.size(), 0);
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], DisplayWidth(row[i]));
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
        const std::string pad(widths[i] - DisplayWidth(cell), ' ');
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
