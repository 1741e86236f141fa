// Messages in the user's language, through GNU gettext (glibc's libintl).
//
// What is translated: text a person reads on a terminal (help, tables, verdicts, advice,
// errors). What never is: --json output, metric names and HELP text, CSV and journal rows,
// file formats, and anything a parser reads back: the library renders those from message
// values with EnglishText (base/message.h) and never calls Tr, so the same command gives the
// same JSON in every language. Only src/cli/ translates (scripts/lint checks it).
//
// Marking, for xgettext (po/README.md): Tr("text") translates now; N_("text") only marks a
// literal that is translated later with Tr(variable) (tables of static strings);
// TrFormat("{} of {}", a, b) translates a fmt format string; TrPlural picks a plural form.
//
// Only LC_MESSAGES and LC_CTYPE are taken from the environment: LC_NUMERIC stays "C", so
// strtod and printf keep the '.' decimal point that /proc, CSV and JSON need whatever the
// user's locale.
#pragma once

#include <fmt/format.h>

#include <clocale>
#include <string>
#include <string_view>

namespace headroom {

// The gettext domain: the catalog is <locale dir>/<lang>/LC_MESSAGES/headroom.mo.
inline constexpr const char* kTextDomain = "headroom";

// Takes LC_MESSAGES and LC_CTYPE from the environment (LANG, LC_ALL, LC_MESSAGES,
// LANGUAGE) and binds the catalog in `locale_dir`. Called once, by main, before any
// thread starts. Without it (or without a catalog for the language) Tr returns its
// argument: English.
void InitMessages(const std::string& locale_dir);

// The translation of `msgid`, or `msgid` itself when there is none or after
// UseEnglishMessages. The pointer lives as long as the program (gettext's contract).
const char* Tr(const char* msgid);

// The singular or plural form for `n`, translated (English: n == 1 picks `singular`).
const char* TrPlural(const char* singular, const char* plural, unsigned long n);

namespace i18n_detail {
// Formats `translated`; when it is not a valid format for the arguments (a broken
// translation), formats the English `msgid` instead, so a bad .po file never aborts.
std::string FormatOrFallBack(const char* translated, fmt::string_view msgid, fmt::format_args args);
}  // namespace i18n_detail

// fmt::format with a translated format string. The English format is checked at compile
// time; the translation is checked when used, and English is used if it does not fit.
template <typename... Args>
std::string TrFormat(fmt::format_string<Args...> msgid, Args&&... args) {
  const fmt::string_view english = msgid;  // a string literal, so NUL-terminated
  return i18n_detail::FormatOrFallBack(Tr(english.data()), english, fmt::make_format_args(args...));
}

// From here on the program speaks English: Tr returns its msgid and strerror English
// (LC_MESSAGES "C", which also makes gettext ignore LANGUAGE). For a command given --json,
// whose output is data and whose warnings and errors are then English too (cli.cc). Called
// by the CLI before the command starts any thread.
void UseEnglishMessages();

}  // namespace headroom

// Marks a literal for extraction without translating it here (see above).
#define N_(text) text
