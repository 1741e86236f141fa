// The terminal of `headroom top`, through ncurses: the only file that includes <curses.h>
// (as nvml.cc is the only one that includes the NVML header's facts). It draws Frames, says
// how big the terminal is and what colours it has, and waits for keys.
//
// Restoring the terminal: the destructor ends curses mode (endwin), so every way out of
// `headroom top` that unwinds the stack restores it: q, an error, an exception. SIGINT,
// SIGTERM and SIGHUP are never handled asynchronously: the caller blocks them and passes a
// signalfd to Wait, which returns when it is readable, and the caller returns normally.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

#include "base/result.h"
#include "top/frame.h"
#include "top/palette.h"
#include "top/ui_state.h"

namespace headroom {

class Terminal {
 public:
  // Enters curses mode on stdin/stdout: the alternate screen, no echo, keys one at a time,
  // no cursor. Errors: stdin or stdout is not a terminal, or terminfo has no entry for
  // $TERM. Colours: off with `no_color` (--no-color, NO_COLOR) or when the terminal has
  // none; otherwise the 8, 16 or 256-colour palette (top/palette.h).
  static Result<std::unique_ptr<Terminal>> Open(bool no_color);

  ~Terminal();
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;

  size_t width() const;
  size_t height() const;
  ColourMode colour() const { return colour_; }

  // Replaces the screen with `frame` (ncurses sends only the cells that changed).
  void Draw(const Frame& frame);

  // The keys pressed within `timeout` (empty when none), returning early at the first key
  // or when `signal_fd` (>= 0) becomes readable, which sets `signalled`.
  std::vector<TopKey> Wait(std::chrono::milliseconds timeout, int signal_fd, bool& signalled);

 private:
  struct Screen;  // the SCREEN* and its state (terminal.cc)
  explicit Terminal(std::unique_ptr<Screen> screen, ColourMode colour);
  std::vector<TopKey> ReadKeys();

  std::unique_ptr<Screen> screen_;
  ColourMode colour_;
};

}  // namespace headroom
