// Implementation notes: the forms are MessageToJson's (base/message.h), dumped with invalid
// UTF-8 replaced so that a text argument that is not UTF-8 (a path) cannot make a write throw.
#include "base/stored_message.h"

#include <nlohmann/json.hpp>

namespace headroom {

Message StoredMessageOr(const std::optional<std::string>& stored, std::string text) {
  if (stored) {
    const auto json = nlohmann::json::parse(*stored, nullptr, /*allow_exceptions=*/false);
    if (auto m = MessageFromJson(json)) return std::move(*m);
  }
  return Message::Literal(std::move(text));
}

std::string MessageToJsonText(const Message& message) {
  return MessageToJson(message).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string MessagesToJsonText(const std::vector<Message>& messages) {
  nlohmann::json out = nlohmann::json::array();
  for (const Message& m : messages) out.push_back(MessageToJson(m));
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<std::vector<Message>> MessagesFromJsonText(std::string_view text) {
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_array()) return std::nullopt;
  std::vector<Message> out;
  for (const auto& item : json) {
    auto m = MessageFromJson(item);
    if (!m) return std::nullopt;
    out.push_back(std::move(*m));
  }
  return out;
}

}  // namespace headroom
