// gettext glue (see i18n.h). dgettext rather than gettext + textdomain, so a library that
// changes the process's default domain cannot take our messages with it.
#include "cli/i18n.h"

#include <libintl.h>

#include <clocale>

namespace headroom {

void InitMessages(const std::string& locale_dir) {
  // LC_CTYPE: the codeset translations are converted to (and ncurses' wide characters).
  // LC_MESSAGES: the language. Never LC_ALL: see the note on LC_NUMERIC in i18n.h.
  std::setlocale(LC_CTYPE, "");
  std::setlocale(LC_MESSAGES, "");
  bindtextdomain(kTextDomain, locale_dir.c_str());
  // The catalog is UTF-8 and so is every terminal DGX OS ships; without this, a C or
  // POSIX LC_CTYPE would turn each Chinese character into '?'.
  bind_textdomain_codeset(kTextDomain, "UTF-8");
}

const char* Tr(const char* msgid) {
  // An empty msgid would return the catalog's header entry.
  if (msgid == nullptr || *msgid == '\0') return msgid;
  return dgettext(kTextDomain, msgid);
}

const char* TrPlural(const char* singular, const char* plural, unsigned long n) {
  return dngettext(kTextDomain, singular, plural, n);
}

namespace i18n_detail {

std::string FormatOrFallBack(const char* translated, fmt::string_view msgid,
                             fmt::format_args args) {
  if (translated != msgid.data()) {
    try {
      return fmt::vformat(translated, args);
    } catch (const fmt::format_error&) {
      // A translation whose placeholders do not match: say it in English instead.
    }
  }
  return fmt::vformat(msgid, args);
}

}  // namespace i18n_detail

void UseEnglishMessages() { std::setlocale(LC_MESSAGES, "C"); }

}  // namespace headroom
