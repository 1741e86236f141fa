// Message values and the English renderer: every argument type, plurals, byte counts and
// errno rendered when the message is, a broken translation falling back to English, and the
// stored JSON form.
#include "base/message.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace headroom {
namespace {

TEST(Message, EnglishTextFormatsEveryArgumentType) {
  const Message m = Msg("{} {} {:.1f} {} {} {} [{}]", -3, uint64_t{7}, 2.25, "text",
                        GB(1'500'000'000), ErrnoArg{ENOENT}, Msg("nested {}", 1));
  EXPECT_EQ(EnglishText(m), "-3 7 2.2 text 1.50 GB No such file or directory [nested 1]");
  EXPECT_EQ(EnglishText(Msg("{:#x}", int64_t{255})), "0xff");
  EXPECT_EQ(EnglishText(Msg("{} / {}", GiB(3ULL << 30), BothUnits(40'120'000'000))),
            "3.00 GiB / 40.12 GB (37.36 GiB)");
}

TEST(Message, PluralPicksTheFormByCount) {
  auto held = [](uint64_t n) {
    return MsgPlural("{} process holds the pool", "{} processes hold the pool", n, n);
  };
  EXPECT_EQ(EnglishText(held(1)), "1 process holds the pool");
  EXPECT_EQ(EnglishText(held(3)), "3 processes hold the pool");
}

TEST(Message, ErrnoIsEnglishAtRenderTimeWhateverTheLocale) {
  // The message holds the number, not a text made when it was built.
  const Message m = Msg("open(x): {}", ErrnoArg{EACCES});
  ASSERT_EQ(m.args().size(), 1u);
  EXPECT_EQ(std::get<ErrnoArg>(m.args()[0]).value, EACCES);
  EXPECT_EQ(EnglishText(m), "open(x): Permission denied");
}

TEST(Message, ABrokenTranslationFallsBackToEnglish) {
  // A renderer whose "translation" has more fields than the message has arguments.
  const MessageLanguage broken{[](const Message&) { return std::string("{} {} {}"); },
                               [](int) { return std::string("?"); }};
  EXPECT_EQ(RenderMessage(Msg("only {}", 1), broken), "only 1");
  // A field of the wrong type too.
  const MessageLanguage wrong_type{[](const Message&) { return std::string("{:d}"); },
                                   [](int) { return std::string("?"); }};
  EXPECT_EQ(RenderMessage(Msg("name {}", "x"), wrong_type), "name x");
  // A stored id that fits nothing (edited by hand) shows as it is.
  EXPECT_EQ(EnglishText(MsgFrom("two {} {}", 1)), "two {} {}");
}

TEST(Message, LiteralAndJoinedTextShowAsTheyAre) {
  EXPECT_EQ(EnglishText(Message::Literal("50% {braces}")), "50% {braces}");
  EXPECT_EQ(EnglishText(JoinMessages({Msg("a {}", 1), Message::Literal("b"), Msg("c")}, "; {x} ")),
            "a 1; {x} b; {x} c");
  EXPECT_EQ(EnglishText(JoinMessages({}, "; ")), "");
}

TEST(Message, JsonFormRoundTrips) {
  const Message m = Msg("{} {} {} {} {} {} {}", -3, uint64_t{1} << 63, 0.1, "t", GiB(5),
                        ErrnoArg{EPERM}, MsgPlural("{} step", "{} steps", 2, 2));
  const nlohmann::json j = MessageToJson(m);
  EXPECT_EQ(j["id"], "{} {} {} {} {} {} {}");
  EXPECT_EQ(j["args"][3], nlohmann::json({{"text", "t"}}));
  EXPECT_EQ(j["args"][5], nlohmann::json({{"errno", EPERM}}));
  // Through text, as the journal stores it.
  const auto back = MessageFromJson(nlohmann::json::parse(j.dump()));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, m);
  EXPECT_EQ(EnglishText(*back), EnglishText(m));
}

TEST(Message, MalformedJsonIsRefused) {
  EXPECT_FALSE(MessageFromJson(nlohmann::json::parse("[]")));
  EXPECT_FALSE(MessageFromJson(nlohmann::json::parse(R"({"args": []})")));
  EXPECT_FALSE(MessageFromJson(nlohmann::json::parse(R"({"id": "{}", "args": [{"what": 1}]})")));
  EXPECT_FALSE(MessageFromJson(nlohmann::json::parse(R"({"id": "{}", "args": 3})")));
  EXPECT_FALSE(MessageFromJson(nlohmann::json::parse(R"({"id": "{}", "plural": "x"})")));
}

}  // namespace
}  // namespace headroom
