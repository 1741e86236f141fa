// Implementation notes. Every span's text is made safe and cut by the builder as it is
// added (top/text_width.h), so a frame can be drawn or printed as it is: nothing later has
// to measure it again. A row's width is the sum of its spans' columns, which is what the
// view's tests hold to the terminal's width.
#include "top/frame.h"

#include "top/text_width.h"

namespace headroom {

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kNormal:
      return "normal";
    case Role::kTitle:
      return "title";
    case Role::kLabel:
      return "label";
    case Role::kValue:
      return "value";
    case Role::kDim:
      return "dim";
    case Role::kGood:
      return "good";
    case Role::kWarn:
      return "warn";
    case Role::kCrit:
      return "crit";
    case Role::kGraph:
      return "graph";
    case Role::kHeader:
      return "header";
    case Role::kPaused:
      return "paused";
    case Role::kKey:
      return "key";
    case Role::kBarUsed:
      return "bar_used";
    case Role::kBarCache:
      return "bar_cache";
    case Role::kMark:
      return "mark";
  }
  return "normal";
}

size_t RowWidth(const FrameRow& row) {
  size_t cols = 0;
  for (const Span& s : row.spans) cols += DisplayWidth(s.text);
  return cols;
}

std::string RowText(const FrameRow& row) {
  std::string text;
  for (const Span& s : row.spans) text += s.text;
  return text;
}

std::string FrameText(const Frame& frame) {
  // Trailing blanks (padding of the title bar and the table head) would make every line of
  // --once as wide as the frame; a reader of the text gains nothing from them.
  std::string out;
  for (const FrameRow& row : frame.rows) {
    std::string line = RowText(row);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  }
  return out;
}

void RowBuilder::Push(std::string text, Role role, size_t cols) {
  if (text.empty()) return;
  used_ += cols;
  // Neighbouring spans of one role are one span: fewer attribute switches to draw.
  if (!row_.spans.empty() && row_.spans.back().role == role) {
    row_.spans.back().text += text;
  } else {
    row_.spans.push_back(Span{std::move(text), role});
  }
}

RowBuilder& RowBuilder::Add(std::string_view text, Role role) {
  std::string fitted = FitWidth(text, left(), utf8_);
  const size_t cols = DisplayWidth(fitted);
  Push(std::move(fitted), role, cols);
  return *this;
}

RowBuilder& RowBuilder::AddCell(std::string_view text, size_t cols, Role role, bool align_right) {
  const size_t n = cols < left() ? cols : left();
  Push(PadToWidth(text, n, utf8_, align_right), role, n);
  return *this;
}

RowBuilder& RowBuilder::PadTo(size_t col) {
  if (col > width_) col = width_;
  if (col > used_) Push(std::string(col - used_, ' '), Role::kNormal, col - used_);
  return *this;
}

}  // namespace headroom
