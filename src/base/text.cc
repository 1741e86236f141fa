#include "base/text.h"

#include <algorithm>
#include <vector>

namespace headroom {

std::string ControlsAsQuestionMarks(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
  }
  return out;
}

std::string EscapeControls(std::string_view text) {
  constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto u = static_cast<unsigned char>(text[i]);
    if (u < 0x20 || u == 0x7F) {
      out += {'\\', 'x', kHex[u >> 4], kHex[u & 0xF]};
    } else if (u == 0xC2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
      const auto c1 = static_cast<unsigned char>(text[++i]);
      out += {'\\', 'u', '0', '0', kHex[c1 >> 4], kHex[c1 & 0xF]};
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string ShellQuoted(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& arg : argv) {
    if (!line.empty()) line += ' ';
    const bool plain =
        !arg.empty() && arg.find_first_of(" \t'\"\\$`;&|<>()*?") == std::string::npos;
    if (plain) {
      line += arg;
    } else {
      line += '\'';
      for (char c : arg) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
      line += '\'';
    }
  }
  return line;
}

std::string ShortenUtf8(const std::string& text, size_t max_chars) {
  size_t chars = 0;
  size_t cut = std::string::npos;  // byte offset where the kept part ends
  for (size_t i = 0; i < text.size(); ++i) {
    if ((text[i] & 0xC0) == 0x80) continue;  // a continuation byte
    if (chars == max_chars - 3) cut = i;
    if (++chars > max_chars) return text.substr(0, cut) + "...";
  }
  return text;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  // Two rows of the dynamic-programming table: the names are short (tens of bytes).
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitute = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, substitute});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace headroom
