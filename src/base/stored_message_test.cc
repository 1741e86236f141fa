#include "base/stored_message.h"

#include <gtest/gtest.h>

namespace headroom {
namespace {

TEST(StoredMessage, OneAndAListRoundTrip) {
  const Message one = Msg("peak {} of a {} budget", GB(9'000'000'000), GB(8'000'000'000));
  EXPECT_EQ(StoredMessageOr(MessageToJsonText(one), "unused"), one);
  const std::vector<Message> notes = {one, MsgPlural("{} warning", "{} warnings", 3, 3),
                                      Msg("open({}): {}", "a\xff.txt", ErrnoArg{2})};
  const auto back = MessagesFromJsonText(MessagesToJsonText(notes));
  ASSERT_TRUE(back);
  ASSERT_EQ(back->size(), 3u);
  EXPECT_EQ((*back)[0], notes[0]);
  EXPECT_EQ((*back)[1], notes[1]);
  // Text that is not UTF-8 is stored with U+FFFD, never a failed write.
  EXPECT_EQ(EnglishText((*back)[2]).substr(0, 9), "open(a\xef\xbf\xbd");
  EXPECT_EQ(MessagesFromJsonText("[]"), std::vector<Message>{});
}

TEST(StoredMessage, MissingOrMalformedReadsAsTheText) {
  EXPECT_EQ(StoredMessageOr(std::nullopt, "as written"), Message::Literal("as written"));
  EXPECT_EQ(StoredMessageOr("{\"args\": []}", "as written"), Message::Literal("as written"));
  EXPECT_EQ(StoredMessageOr("not json", "as written"), Message::Literal("as written"));
  EXPECT_FALSE(MessagesFromJsonText("{\"id\": \"x\"}"));       // not an array
  EXPECT_FALSE(MessagesFromJsonText("[{\"id\": \"x\"}, 7]"));  // an item that is not one
  EXPECT_FALSE(MessagesFromJsonText(""));
}

}  // namespace
}  // namespace headroom
