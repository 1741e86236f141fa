// What the person at `headroom top` has asked for: paused, the help page, the sort order;
// and how each key changes it. Pure, so the key handling is a unit test; the ncurses layer
// only turns key codes into TopKey.
#pragma once

#include "top/top_model.h"

namespace headroom {

enum class TopKey { kQuit, kPause, kSort, kHelp, kResize, kOther };

// q quit, p pause, s sort, h (or ?) help; upper case too. Everything else is kOther.
TopKey KeyFromChar(int ch);

struct UiState {
  bool paused = false;  // the display is frozen (sampling goes on)
  bool help = false;    // the help page is up
  SortOrder sort = SortOrder::kMemory;
};

enum class KeyAction {
  kNone,    // nothing to redraw
  kRedraw,  // lay the frame out again
  kFreeze,  // paused now: keep the current snapshot to draw from, then redraw
  kQuit,
};

// Applies one key. While the help page is up, any key closes it and does nothing else (a
// resize only redraws it).
KeyAction ApplyKey(UiState& ui, TopKey key);

}  // namespace headroom
