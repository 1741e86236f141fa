// UTF-8 by hand, locale-free: decoding that turns each bad byte into one U+FFFD (so a stray
// byte in a process name costs one column, not the rest of the string) and encoding. Used by
// the display widths (base/display_width, top/text_width) and the configuration parser's
// shielding of toml++ (config/config_toml).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace headroom {

inline constexpr char32_t kReplacementCharacter = 0xFFFD;

// The code point at text[pos], advancing pos past it. A byte that does not start a
// well-formed sequence (a stray continuation byte, an overlong form, a UTF-16 surrogate, a
// value past U+10FFFF, a sequence cut short) decodes as U+FFFD and advances pos by one.
// `pos` must be below text.size().
char32_t DecodeUtf8(std::string_view text, size_t& pos);

// Appends the UTF-8 encoding of `c` (at most U+10FFFF) to `out`.
void AppendUtf8(std::string& out, char32_t c);

}  // namespace headroom
