// Test helper (tests only): the built zh_TW catalog on the calling thread, so a unit test
// can check that display text is translated and data stays English in the same run.
//
// Only this thread changes language (uselocale), and only while the object lives; the
// catalog binding is process-wide but inert for threads in the "C" locale, where gettext
// returns every msgid unchanged, so the other tests (which assert English) are untouched.
// Skip the test when usable() is false: no zh_TW.UTF-8 locale on this machine, or no
// catalog built (gettext's tools missing).
#pragma once

#include <libintl.h>

#include <clocale>
#include <filesystem>
#include <string>

#include "cli/i18n.h"

namespace headroom::testing {

class TranslatedThread {
 public:
  explicit TranslatedThread(const char* locale_name = "zh_TW.UTF-8") {
    const std::string dir = std::string(HEADROOM_BINARY_DIR) + "/locale";
    if (!std::filesystem::exists(dir + "/zh_TW/LC_MESSAGES/headroom.mo")) return;
    zh_ = newlocale(LC_MESSAGES_MASK | LC_CTYPE_MASK, locale_name, static_cast<locale_t>(nullptr));
    if (zh_ == static_cast<locale_t>(nullptr)) return;
    bindtextdomain(kTextDomain, dir.c_str());
    bind_textdomain_codeset(kTextDomain, "UTF-8");
    previous_ = uselocale(zh_);
  }
  ~TranslatedThread() {
    if (zh_ == static_cast<locale_t>(nullptr)) return;
    uselocale(previous_);
    freelocale(zh_);
  }
  TranslatedThread(const TranslatedThread&) = delete;
  TranslatedThread& operator=(const TranslatedThread&) = delete;

  // The catalog answers on this thread: a known message comes back translated.
  bool usable() const {
    return zh_ != static_cast<locale_t>(nullptr) &&
           std::string(Tr("does not fit")) != "does not fit";
  }

 private:
  locale_t zh_ = static_cast<locale_t>(nullptr);
  locale_t previous_ = static_cast<locale_t>(nullptr);
};

}  // namespace headroom::testing

// Inside a test: skip it where the zh_TW catalog cannot be used.
#define HEADROOM_REQUIRE_ZH_TW(translated)                                                   \
  do {                                                                                       \
    if (!(translated).usable()) GTEST_SKIP() << "no zh_TW.UTF-8 locale or no built catalog"; \
  } while (0)
