#include "top/ui_state.h"

namespace headroom {

TopKey KeyFromChar(int ch) {
  switch (ch) {
    case 'q':
    case 'Q':
      return TopKey::kQuit;
    case 'p':
    case 'P':
      return TopKey::kPause;
    case 's':
    case 'S':
      return TopKey::kSort;
    case 'h':
    case 'H':
    case '?':
      return TopKey::kHelp;
    default:
      return TopKey::kOther;
  }
}

// The help page swallows the key that closes it: a reader pressing q to leave the help
// would not expect top itself to quit.
KeyAction ApplyKey(UiState& ui, TopKey key) {
  if (key == TopKey::kResize) return KeyAction::kRedraw;
  if (ui.help) {
    ui.help = false;
    return KeyAction::kRedraw;
  }
  switch (key) {
    case TopKey::kQuit:
      return KeyAction::kQuit;
    case TopKey::kPause:
      // Freezing asks the caller to copy the current snapshot and history: the view then
      // lays out that copy while the collector goes on.
      ui.paused = !ui.paused;
      return ui.paused ? KeyAction::kFreeze : KeyAction::kRedraw;
    case TopKey::kSort:
      ui.sort = NextSortOrder(ui.sort);
      return KeyAction::kRedraw;
    case TopKey::kHelp:
      ui.help = true;
      return KeyAction::kRedraw;
    case TopKey::kResize:
    case TopKey::kOther:
      break;
  }
  return KeyAction::kNone;
}

}  // namespace headroom
