// Helpers over base/i18n.h for the library's messages: TrPair (one message in English and
// in the user's language), TrPlural with format arguments, ErrnoText.
//
// TrPair: one message in two languages, for text that both a file and a person get: `english` for
// data (JSON, the journal, events files, CSV), which never changes with the user's locale,
// and `shown` in the user's language for the terminal (base/i18n.h).
//
// Why both at once: some results are made once and then both stored and printed (a guard's
// notes go to the events file, the journal and stderr; plan's advice to the ladder's journal
// and the screen). Formatting the same msgid twice keeps the two in step by construction.
//
// Marking, for xgettext: TrPair(N_("text {}"), value): N_ marks the literal, TrPair
// translates it. Arguments are formatted twice, the English form inside an
// UntranslatedScope, so an argument whose formatter reads the locale (ErrnoText below)
// comes out in each language; an argument that is already a translated string does not:
// pass identifiers and numbers.
#pragma once

#include <fmt/format.h>

#include <cstring>
#include <string>

#include "base/i18n.h"

namespace headroom {

struct TextPair {
  std::string english;  // for data
  std::string shown;    // for people, in the user's language
};

template <typename... Args>
TextPair TrPair(fmt::format_string<const Args&...> msgid, const Args&... args) {
  TextPair out;
  out.shown = TrFormat(msgid, args...);
  const UntranslatedScope english;
  out.english = fmt::format(msgid, args...);
  return out;
}

// The plural form for `n`, translated, formatted with `args` (fmt's {} fields); a
// translation whose fields do not fit the arguments falls back to the English form.
// xgettext knows it as TrPlural (scripts/update-pot: TrPlural:1,2).
template <typename Arg, typename... Args>
std::string TrPlural(const char* singular, const char* plural, unsigned long n, const Arg& arg,
                     const Args&... args) {
  const char* english = n == 1 ? singular : plural;
  return i18n_detail::FormatOrFallBack(TrPlural(singular, plural, n), english,
                                       fmt::make_format_args(arg, args...));
}

// strerror(errno_value) at the time it is formatted, so in the language of the scope it is
// formatted in (glibc translates strerror through LC_MESSAGES too).
struct ErrnoText {
  int errno_value = 0;
};

}  // namespace headroom

template <>
struct fmt::formatter<headroom::ErrnoText> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(const headroom::ErrnoText& e, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(std::strerror(e.errno_value), ctx);
  }
};
