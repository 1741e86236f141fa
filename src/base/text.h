// Small text helpers shared across modules. ASCII only on purpose: the inputs (suffixes,
// flag values, kernel and log text) are ASCII where it matters, and a locale must not change
// what a parser accepts.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace headroom {

// `s` with A-Z turned into a-z; every other byte as it was.
inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// A blank in kernel, configuration and log text: space, tab, CR or LF.
inline bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// `s` without leading and trailing blanks (IsBlank).
inline std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

// `text` with each control character (C0 and DEL: a newline in an argument, an escape
// sequence) as '?', so that it cannot break a table or the terminal.
std::string ControlsAsQuestionMarks(std::string_view text);

// `text` as it may reach a terminal: each control character written as an escape, so that
// text from outside (a file's value, a page another machine served, a report) shows what it
// holds and cannot move the cursor, set the window title or ring the bell. C0 and DEL become
// "\xHH" ("\x1b" for ESC, "\x0a" for a newline), a C1 control in UTF-8 (U+0080..U+009F, which
// some terminals obey like ESC) becomes "\u0080".."\u009f"; every other byte is kept, so
// UTF-8 text and its width are unchanged. A backslash is kept as it is: the form is for people
// to read, not to be parsed back.
std::string EscapeControls(std::string_view text);

// An argv as a shell would show it, one blank between arguments: an empty argument, or one
// with a blank, a quote, a backslash or a shell metacharacter, in single quotes (a quote
// inside as '\''). Control characters are left as they are.
std::string ShellQuoted(const std::vector<std::string>& argv);

// `text` cut to `max_chars` code points (`max_chars` >= 3), never inside a UTF-8 sequence,
// ending in "..." when cut.
std::string ShortenUtf8(const std::string& text, size_t max_chars);

// Levenshtein distance (insert, delete, substitute: one each), for "did you mean" hints over
// short names: model names, configuration keys.
size_t EditDistance(std::string_view a, std::string_view b);

}  // namespace headroom
