// cli/i18n without a catalog: this binary never calls InitMessages (it would change the
// locale of every other test), so Tr is the identity here and the translated path is tested
// through the real binary (tests/cli/i18n_cli_test.cc, which also covers UseEnglishMessages:
// JsonMakesTheConfigurationErrorEnglish). What is tested here: the fallback of a translation
// whose placeholders do not fit, and the edge cases of Tr and TrPlural.
#include "cli/i18n.h"

#include <gtest/gtest.h>

#include <clocale>
#include <string>

namespace headroom {
namespace {

std::string Format(const char* translated, fmt::string_view english, int a, int b) {
  return i18n_detail::FormatOrFallBack(translated, english, fmt::make_format_args(a, b));
}

TEST(I18n, TranslationThatFitsIsUsedWithItsOwnOrder) {
  EXPECT_EQ(Format("{1} 中的第 {0} 個", "{} of {}", 3, 7), "7 中的第 3 個");
}

TEST(I18n, TranslationWithBrokenPlaceholdersFallsBackToEnglish) {
  const char* english = "{} of {}";
  // A field past the arguments, a malformed field, an unknown presentation type, and a
  // mix of automatic and manual indexing: each would throw in fmt::vformat.
  for (const char* broken : {"{} / {} / {}", "{ of {}", "{:q} of {}", "{0} of {}", "{2} of {0}"}) {
    EXPECT_EQ(Format(broken, english, 3, 7), "3 of 7") << broken;
  }
}

TEST(I18n, TranslationMayDropOrRepeatArguments) {
  // Valid for fmt, and so kept (catalog_test.py is what keeps placeholders complete).
  EXPECT_EQ(Format("{0}/{0}", "{} of {}", 3, 7), "3/3");
}

TEST(I18n, UntranslatedMessageIsFormattedFromTheEnglish) {
  const char* english = "{} of {}";
  EXPECT_EQ(Format(english, english, 3, 7), "3 of 7");  // Tr returned its argument
  EXPECT_EQ(TrFormat("{} of {}", 3, 7), "3 of 7");
  EXPECT_EQ(TrFormat("{0:.1f} GB, {1}", 1.25, "x"), "1.2 GB, x");
}

TEST(I18n, TrOfEmptyAndNullIsItsArgumentNotTheCatalogHeader) {
  const char* empty = "";
  EXPECT_EQ(Tr(empty), empty);
  EXPECT_STREQ(Tr(""), "");
  EXPECT_EQ(Tr(nullptr), nullptr);
  const char* text = "no catalog is bound in this binary";
  EXPECT_EQ(Tr(text), text);  // the same pointer: gettext's contract for a missing message
}

TEST(I18n, TrPluralPicksTheEnglishFormWithoutACatalog) {
  EXPECT_STREQ(TrPlural("{} event", "{} events", 1), "{} event");
  EXPECT_STREQ(TrPlural("{} event", "{} events", 0), "{} events");
  EXPECT_STREQ(TrPlural("{} event", "{} events", 2), "{} events");
}

}  // namespace
}  // namespace headroom
