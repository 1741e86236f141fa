// Message values as a journal column holds them: the stored form of base/message.h
// (MessageToJson) as text, one message or a list, and back, with the rule every reader of such
// a column follows: a row without one (written before messages were stored) or with one that
// does not parse is shown as the English text it holds (docs/journal.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/message.h"

namespace headroom {

// The stored form as text, for a journal column (text that is not UTF-8 becomes U+FFFD).
std::string MessageToJsonText(const Message& message);

// A message read back from such a column: the message when `stored` holds one that parses,
// else `text` as literal text.
Message StoredMessageOr(const std::optional<std::string>& stored, std::string text);

// A list of messages as one JSON array of stored forms (a run's notes), and back: nullopt
// when `text` is not such an array.
std::string MessagesToJsonText(const std::vector<Message>& messages);
std::optional<std::vector<Message>> MessagesFromJsonText(std::string_view text);

}  // namespace headroom
