// Implementation notes.
//  - newterm(NULL, stdout, stdin), not initscr: initscr prints and exits on an unknown
//    $TERM; newterm returns NULL, which becomes a one-line error and exit status 2.
//  - Text goes out as wide characters (mbstowcs under the process's LC_CTYPE, then
//    addnwstr): ncursesw then knows that a CJK character takes two cells, so the cells
//    after it land where the layout (top/text_width.h) put them.
//  - Keys: poll() on stdin and the signalfd, then getch() in no-delay mode until it has
//    nothing. ncurses turns SIGWINCH into KEY_RESIZE (its own handler, which also updates
//    LINES and COLS); the signal ends poll() with EINTR and the next getch() returns it.
//    ESCDELAY is cut to 25 ms so a lone Escape is not a one-second stall.
//  - Colours: one pair per role (pair number = role + 1). use_default_colors() lets -1
//    mean the terminal's own foreground and background; where it fails, white on black.
//  - The cursor is hidden while drawing and shown again before endwin, which restores the
//    tty modes and leaves the alternate screen.
#define NCURSES_WIDECHAR 1
#include "top/terminal.h"

#include <curses.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cwchar>
#include <string>

namespace headroom {

struct Terminal::Screen {
  SCREEN* screen = nullptr;
  bool colour_pairs = false;
  ~Screen() {
    if (screen == nullptr) return;
    curs_set(1);
    endwin();
    delscreen(screen);
  }
};

namespace {

attr_t Attributes(const Style& s) {
  attr_t a = A_NORMAL;
  if (s.bold) a |= A_BOLD;
  if (s.reverse) a |= A_REVERSE;
  if (s.underline) a |= A_UNDERLINE;
  return a;
}

std::wstring Wide(const std::string& utf8) {
  std::wstring out(utf8.size() + 1, L'\0');
  const size_t n = std::mbstowcs(out.data(), utf8.c_str(), out.size());
  if (n == static_cast<size_t>(-1)) {
    // Not valid in this locale (the view made it safe, so only a locale change gets here).
    out.assign(utf8.size(), L'?');
    return out;
  }
  out.resize(n);
  return out;
}

}  // namespace

Result<std::unique_ptr<Terminal>> Terminal::Open(bool no_color) {
  if (!::isatty(STDIN_FILENO) || !::isatty(STDOUT_FILENO)) {
    return Error{
        "stdin and stdout must be a terminal (for scripts: --once, --iterations N or --json)"};
  }
  const char* term = std::getenv("TERM");
  auto screen = std::make_unique<Screen>();
  screen->screen = newterm(nullptr, stdout, stdin);
  if (screen->screen == nullptr) {
    return Error{std::string("no terminfo entry for TERM='") + (term ? term : "") + "'"};
  }
  set_term(screen->screen);
  cbreak();
  noecho();
  nonl();
  keypad(stdscr, TRUE);
  nodelay(stdscr, TRUE);
  set_escdelay(25);
  curs_set(0);
  ColourMode mode = ColourMode::kMono;
  if (!no_color && has_colors() && start_color() == OK) {
    mode = ChooseColourMode(true, COLORS, false);
    const bool defaults = use_default_colors() == OK;
    if (mode != ColourMode::kMono && COLOR_PAIRS > static_cast<int>(kRoleCount)) {
      for (size_t r = 0; r < kRoleCount; ++r) {
        const Style s = StyleFor(static_cast<Role>(r), mode);
        const short fg = static_cast<short>(s.fg >= 0 ? s.fg : (defaults ? -1 : COLOR_WHITE));
        const short bg = static_cast<short>(s.bg >= 0 ? s.bg : (defaults ? -1 : COLOR_BLACK));
        init_pair(static_cast<short>(r + 1), fg, bg);
      }
      screen->colour_pairs = true;
    } else {
      mode = ColourMode::kMono;
    }
  }
  return std::unique_ptr<Terminal>(new Terminal(std::move(screen), mode));
}

Terminal::Terminal(std::unique_ptr<Screen> screen, ColourMode colour)
    : screen_(std::move(screen)), colour_(colour) {}

Terminal::~Terminal() = default;

size_t Terminal::width() const { return COLS > 0 ? static_cast<size_t>(COLS) : 0; }
size_t Terminal::height() const { return LINES > 0 ? static_cast<size_t>(LINES) : 0; }

void Terminal::Draw(const Frame& frame) {
  erase();
  const int rows = LINES, cols = COLS;
  for (size_t y = 0; y < frame.rows.size() && static_cast<int>(y) < rows; ++y) {
    move(static_cast<int>(y), 0);
    for (const Span& span : frame.rows[y].spans) {
      const Style style = StyleFor(span.role, colour_);
      attr_t attrs = Attributes(style);
      if (screen_->colour_pairs) attrs |= COLOR_PAIR(static_cast<int>(span.role) + 1);
      attrset(attrs);
      const std::wstring text = Wide(span.text);
      // The bottom-right cell makes addnwstr answer ERR (the cursor cannot move past it)
      // after writing it: the text is drawn, the answer is ignored.
      (void)addnwstr(text.c_str(), static_cast<int>(text.size()));
      int cy = 0, cx = 0;
      getyx(stdscr, cy, cx);
      if (cy != static_cast<int>(y) || cx >= cols) break;
    }
  }
  attrset(A_NORMAL);
  refresh();
}

std::vector<TopKey> Terminal::ReadKeys() {
  std::vector<TopKey> keys;
  for (;;) {
    wint_t ch = 0;
    const int kind = get_wch(&ch);
    if (kind == ERR) break;
    if (kind == KEY_CODE_YES) {
      keys.push_back(ch == KEY_RESIZE ? TopKey::kResize : TopKey::kOther);
    } else {
      keys.push_back(ch < 0x80 ? KeyFromChar(static_cast<int>(ch)) : TopKey::kOther);
    }
  }
  return keys;
}

std::vector<TopKey> Terminal::Wait(std::chrono::milliseconds timeout, int signal_fd,
                                   bool& signalled) {
  signalled = false;
  // Keys ncurses has already read from the tty (part of an escape sequence, or a resize
  // noted by its handler) would not wake poll(): take them first.
  std::vector<TopKey> keys = ReadKeys();
  if (!keys.empty()) return keys;
  pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {signal_fd, POLLIN, 0}};
  const int n = ::poll(fds, signal_fd >= 0 ? 2 : 1, static_cast<int>(timeout.count()));
  if (n < 0 && errno != EINTR) return keys;
  if (n > 0 && signal_fd >= 0 && (fds[1].revents & POLLIN)) signalled = true;
  // A terminal that went away (the emulator closed without a SIGHUP reaching us) would
  // make every poll return at once: it ends top as a signal would.
  if (n > 0 && (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL))) signalled = true;
  return ReadKeys();
}

}  // namespace headroom
