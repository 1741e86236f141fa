// A frame of `headroom top`: rows of text spans, each with a colour role, exactly as wide
// as the terminal or narrower. The view (cli/top/top_view.h) makes one from a snapshot, without
// a terminal; the ncurses layer (top/terminal.h) draws it, and --once prints it as plain
// text. Roles say what a span is (a label, a warning, a graph), never which colour it gets:
// that is the palette's choice (top/palette.h) for the terminal at hand.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace headroom {

enum class Role : uint8_t {
  kNormal,
  kTitle,     // the title bar
  kLabel,     // "pool", "PSI", "GPU"
  kValue,     // a reading
  kDim,       // "n/a", notes, the free part of a bar
  kGood,      // a healthy reading where it matters (no throttle)
  kWarn,      // past a warning threshold
  kCrit,      // past a kill level or at the limit
  kGraph,     // sparklines
  kHeader,    // the process table's head
  kPaused,    // the PAUSED marker
  kKey,       // a key letter in the hints
  kBarUsed,   // the used part of a memory bar
  kBarCache,  // its page-cache part
  kMark,      // a guard level drawn on a bar
};
inline constexpr size_t kRoleCount = 15;

// "normal", "title", ...: for tests and --once's debugging, never shown to users.
std::string_view RoleName(Role role);

struct Span {
  std::string text;  // TerminalSafe UTF-8 (top/text_width.h)
  Role role = Role::kNormal;
};

struct FrameRow {
  std::vector<Span> spans;
};

struct Frame {
  size_t width = 0;
  size_t height = 0;
  std::vector<FrameRow> rows;  // at most `height`; missing rows are blank
};

// Columns a row takes.
size_t RowWidth(const FrameRow& row);
// A row's text without roles.
std::string RowText(const FrameRow& row);
// The frame as plain text: one line per row, trailing blanks dropped, '\n' after each.
std::string FrameText(const Frame& frame);

// Builds one row left to right within `width` columns: whatever is added past the width is
// cut (with an ellipsis), so a row can never overflow, whatever the text's script.
class RowBuilder {
 public:
  RowBuilder(size_t width, bool utf8) : width_(width), utf8_(utf8) {}

  // Appends `text` (made safe, cut to what is left).
  RowBuilder& Add(std::string_view text, Role role = Role::kNormal);
  // Appends `text` padded or cut to exactly `cols` columns (or what is left).
  RowBuilder& AddCell(std::string_view text, size_t cols, Role role = Role::kNormal,
                      bool align_right = false);
  // Appends spaces up to column `col` (nothing when already there).
  RowBuilder& PadTo(size_t col);

  size_t used() const { return used_; }
  size_t left() const { return width_ - used_; }
  bool utf8() const { return utf8_; }
  FrameRow Take() { return std::move(row_); }

 private:
  void Push(std::string text, Role role, size_t cols);
  size_t width_;
  bool utf8_;
  size_t used_ = 0;
  FrameRow row_;
};

}  // namespace headroom
