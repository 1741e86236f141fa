// The terminal's renderer under zh_TW, with the built catalog on this thread
// (tests/support/testing_messages.h): the same message value renders in Chinese here and in English
// through EnglishText, strerror in each renderer's language at render time. The fallback of
// a translation that does not fit its arguments is RenderMessage's, shared by both renderers
// and tested in base/message_test.cc.
#include "cli/message_text.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

#include "gpu/clock_events.h"
#include "testing_messages.h"

namespace headroom {
namespace {

TEST(TranslatedText, WithoutACatalogItIsTheEnglish) {
  const Message m = Msg("child subreaper: {}", ErrnoArg{EPERM});
  EXPECT_EQ(TranslatedText(m), EnglishText(m));
  EXPECT_EQ(TranslatedText(m), "child subreaper: Operation not permitted");
}

TEST(TranslatedText, ZhTwTranslatesAtRenderTimeAndEnglishStaysEnglish) {
  const Message fits = Msg("does not fit");
  const Message subreaper = Msg("child subreaper: {}", ErrnoArg{EPERM});
  const Message held = MsgPlural("{} process holds or will grab the pool: {}",
                                 "{} processes hold or will grab the pool: {}", 3, 3, "x");
  {
    testing::TranslatedThread zh;
    HEADROOM_REQUIRE_ZH_TW(zh);
    EXPECT_EQ(TranslatedText(fits), "無法容納");
    // strerror follows the thread's LC_MESSAGES when the message is rendered.
    EXPECT_EQ(TranslatedText(subreaper), std::string("child subreaper：") + std::strerror(EPERM));
    EXPECT_EQ(TranslatedText(held), "3 個行程占用或將搶占記憶體池：x");
    // A nested message is translated by the same renderer.
    EXPECT_EQ(TranslatedText(Msg("[{}]", fits)), "[無法容納]");
    // The English renderer on the same thread: English, strerror included.
    EXPECT_EQ(EnglishText(fits), "does not fit");
    EXPECT_EQ(EnglishText(subreaper), "child subreaper: Operation not permitted");
    EXPECT_EQ(EnglishText(held), "3 processes hold or will grab the pool: x");
    // A stored message read back from JSON translates the same way.
    EXPECT_EQ(TranslatedText(*MessageFromJson(MessageToJson(held))), TranslatedText(held));
    // Text given as literal stays as it is.
    EXPECT_EQ(TranslatedText(Message::Literal("does not fit")), "does not fit");
  }
}

// A clock-event reason keeps its name on screen and gains an explanation in zh_TW
// (gpu/clock_events.h); a name the table does not know is shown as it is.
TEST(TranslatedText, ClockEventReasonWordsTranslateButNamesDoNot) {
  EXPECT_EQ(TranslatedText(ClockEventReasonWord("sw_power_cap")), "sw_power_cap");
  EXPECT_EQ(TranslatedText(ClockEventReasonWord("unknown_0x200")), "unknown_0x200");
  testing::TranslatedThread zh;
  HEADROOM_REQUIRE_ZH_TW(zh);
  EXPECT_EQ(TranslatedText(ClockEventReasonWord("sw_power_cap")), "sw_power_cap（軟體功耗上限）");
  EXPECT_EQ(TranslatedText(ClockEventReasonWord("unknown_0x200")), "unknown_0x200");
  EXPECT_EQ(DecodeClockEventReasons(0x004), std::vector<std::string>{"sw_power_cap"});
}

}  // namespace
}  // namespace headroom
