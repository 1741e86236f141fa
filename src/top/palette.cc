// Implementation notes. Colour numbers are the terminfo ones (setaf): 0-7 black, red, green,
// yellow, blue, magenta, cyan, white; 8-15 their bright forms; 16-231 the 6x6x6 cube and
// 232-255 the grey ramp of xterm-256color. The 8-colour mode takes brightness from bold,
// the way those terminals show it. Backgrounds stay the terminal's own (-1) except in the
// title bar and the table head, which are reverse video in every mode, so a light or dark
// terminal theme keeps its contrast.
#include "top/palette.h"

namespace headroom {
namespace {

constexpr int kRed = 1, kGreen = 2, kYellow = 3, kBlue = 4, kCyan = 6;

Style Mono(Role role) {
  Style s;
  switch (role) {
    case Role::kTitle:
    case Role::kPaused:
      s.reverse = s.bold = true;
      break;
    case Role::kHeader:
    case Role::kBarUsed:
      s.reverse = true;
      break;
    case Role::kLabel:
    case Role::kWarn:
    case Role::kMark:
      s.bold = true;
      break;
    case Role::kCrit:
      s.bold = s.reverse = true;
      break;
    case Role::kKey:
      s.underline = s.bold = true;
      break;
    default:
      break;
  }
  return s;
}

Style Colour(Role role, ColourMode mode) {
  const bool bright = mode != ColourMode::k8;  // 8 colours: bright via bold
  const bool cube = mode == ColourMode::k256;
  Style s;
  switch (role) {
    case Role::kTitle:
      s.reverse = s.bold = true;
      s.fg = cube ? 31 : kCyan;
      break;
    case Role::kHeader:
      s.reverse = true;
      s.fg = cube ? 67 : kBlue;
      break;
    case Role::kPaused:
      s.reverse = s.bold = true;
      s.fg = cube ? 214 : kYellow;
      break;
    case Role::kLabel:
      s.bold = true;
      s.fg = cube ? 75 : (bright ? 8 + kCyan : kCyan);
      break;
    case Role::kValue:
      break;  // the terminal's own foreground reads best on any theme
    case Role::kDim:
      s.fg = cube ? 244 : (bright ? 8 : -1);  // bright black is grey; 8 colours have none
      break;
    case Role::kGood:
      s.fg = cube ? 114 : kGreen;
      break;
    case Role::kWarn:
      s.fg = cube ? 214 : kYellow;
      s.bold = !bright;
      break;
    case Role::kCrit:
      s.fg = cube ? 196 : (bright ? 8 + kRed : kRed);
      s.bold = true;
      break;
    case Role::kGraph:
      s.fg = cube ? 73 : kCyan;
      break;
    case Role::kKey:
      s.bold = s.underline = true;
      s.fg = cube ? 222 : kYellow;
      break;
    case Role::kBarUsed:
      s.fg = cube ? 68 : kBlue;
      break;
    case Role::kBarCache:
      s.fg = cube ? 108 : kGreen;
      break;
    case Role::kMark:
      s.fg = cube ? 203 : (bright ? 8 + kRed : kRed);
      s.bold = true;
      break;
    case Role::kNormal:
      break;
  }
  return s;
}

}  // namespace

std::string_view ColourModeName(ColourMode mode) {
  switch (mode) {
    case ColourMode::kMono:
      return "mono";
    case ColourMode::k8:
      return "8";
    case ColourMode::k16:
      return "16";
    case ColourMode::k256:
      return "256";
  }
  return "mono";
}

ColourMode ChooseColourMode(bool has_colors, int colors, bool no_color) {
  if (no_color || !has_colors || colors < 8) return ColourMode::kMono;
  if (colors >= 256) return ColourMode::k256;
  if (colors >= 16) return ColourMode::k16;
  return ColourMode::k8;
}

Style StyleFor(Role role, ColourMode mode) {
  return mode == ColourMode::kMono ? Mono(role) : Colour(role, mode);
}

}  // namespace headroom
