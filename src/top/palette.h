// Colours and attributes for each role of a frame (top/frame.h), per kind of terminal:
//   256    xterm-256color, tmux-256color: the 256-colour cube for softer tones
//   16     xterm-16color: the eight colours and their bright halves
//   8      xterm, screen, linux: the eight colours, brightness from bold
//   mono   vt100, xterm-mono, NO_COLOR, --no-color: bold, reverse, underline only
// A pure table, so each mode is a unit test; the ncurses layer turns a Style into colour
// pairs and attributes. In mono every role that colour would single out gets an attribute
// instead, and the view adds '!' marks to warnings (colour is never the only signal).
#pragma once

#include <string_view>

#include "top/frame.h"

namespace headroom {

enum class ColourMode { kMono, k8, k16, k256 };

// "mono", "8", "16", "256".
std::string_view ColourModeName(ColourMode mode);

// The mode for a terminal with `has_colors` and `colors` (terminfo's colors#, ncurses'
// COLORS), unless colour is turned off (`no_color`: --no-color or NO_COLOR).
ColourMode ChooseColourMode(bool has_colors, int colors, bool no_color);

struct Style {
  int fg = -1;  // colour number, -1: the terminal's default
  int bg = -1;
  bool bold = false;
  bool reverse = false;
  bool underline = false;
};

Style StyleFor(Role role, ColourMode mode);

}  // namespace headroom
