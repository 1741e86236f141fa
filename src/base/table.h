// A plain-text table for terminal output: columns sized to their widest cell in terminal
// columns (base/display_width.h: a CJK character takes two), numbers right-aligned. The CLI hands
// the rendered string to its output stream.
#pragma once

#include <string>
#include <vector>

namespace headroom {

class TextTable {
 public:
  enum class Align { kLeft, kRight };
  explicit TextTable(std::vector<Align> aligns) : aligns_(std::move(aligns)) {}
  void AddRow(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  // A row drawn as a dashed rule across the table (at most 80 columns).
  void AddRule() { rows_.push_back({}); }
  // Renders with `indent` spaces before each line and two spaces between columns.
  std::string Render(size_t indent = 2) const;

 private:
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace headroom
