// TrPair, the formatting TrPlural and ErrnoText, in English (no catalog: how every other test
// runs) and on a thread translated to zh_TW with the built catalog
// (tests/support/testing_messages.h).
#include "base/messages.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

#include "testing_messages.h"

namespace headroom {
namespace {

TEST(Messages, WithoutACatalogBothFormsAreTheEnglish) {
  const TextPair p = TrPair(N_("child subreaper: {}"), ErrnoText{EPERM});
  EXPECT_EQ(p.english, std::string("child subreaper: ") + std::strerror(EPERM));
  EXPECT_EQ(p.shown, p.english);
  EXPECT_EQ(TrPlural("{} process holds or will grab the pool: {}",
                     "{} processes hold or will grab the pool: {}", 1, 1, "x"),
            "1 process holds or will grab the pool: x");
  EXPECT_EQ(TrPlural("{} process holds or will grab the pool: {}",
                     "{} processes hold or will grab the pool: {}", 3, 3, "x"),
            "3 processes hold or will grab the pool: x");
}

TEST(Messages, TranslatedThreadShowsChineseAndKeepsTheEnglishForData) {
  testing::TranslatedThread zh;
  HEADROOM_REQUIRE_ZH_TW(zh);
  const TextPair p = TrPair(N_("child subreaper: {}"), ErrnoText{EPERM});
  // strerror is formatted inside the UntranslatedScope too, so the data form is all English.
  EXPECT_EQ(p.english, "child subreaper: Operation not permitted");
  EXPECT_NE(p.shown, p.english);
  EXPECT_TRUE(p.shown.starts_with("child subreaper：")) << p.shown;
  EXPECT_EQ(TrPlural("{} process holds or will grab the pool: {}",
                     "{} processes hold or will grab the pool: {}", 3, 3, "x"),
            "3 個行程占用或將搶占記憶體池：x");
  // An UntranslatedScope is English for its own lifetime only.
  {
    const UntranslatedScope english;
    EXPECT_STREQ(Tr("does not fit"), "does not fit");
  }
  EXPECT_STREQ(Tr("does not fit"), "無法容納");
}

}  // namespace
}  // namespace headroom
