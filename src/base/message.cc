// Implementation notes: a message is rendered through fmt's dynamic argument store, so the
// arguments keep their types (a "{:.1f}" field gets a double, "{:#x}" an integer) while the
// format string is chosen at run time (the translation). Everything that depends on the
// language (strerror, nested messages) is turned into text here, at render time, by the
// renderer's MessageLanguage; a byte count is formatted here too, the same in every
// language (units are never translated, po/README.md).
#include "base/message.h"

#include <fmt/args.h>

#include <clocale>
#include <cstring>

#include "base/bytes.h"
#include "base/text.h"

namespace headroom {
namespace {

std::string FormatBytes(const ByteCount& b) {
  switch (b.unit) {
    case ByteCount::Unit::kBinary:
      return FormatGiB(b.bytes);
    case ByteCount::Unit::kBoth:
      return FormatBoth(b.bytes);
    case ByteCount::Unit::kDecimal:
      break;
  }
  return FormatGB(b.bytes);
}

std::string_view UnitName(ByteCount::Unit unit) {
  switch (unit) {
    case ByteCount::Unit::kBinary:
      return "GiB";
    case ByteCount::Unit::kBoth:
      return "both";
    case ByteCount::Unit::kDecimal:
      break;
  }
  return "GB";
}

// strerror in English whatever the process's LC_MESSAGES: strerror_l with a "C" locale,
// made once (a locale handle that is never changed, not mutable state).
std::string EnglishErrnoText(int value) {
  static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(nullptr));
  if (c_locale == static_cast<locale_t>(nullptr)) return std::strerror(value);
  return strerror_l(value, c_locale);
}

std::string EnglishFormat(const Message& m) { return m.english_format(); }

constexpr MessageLanguage kEnglish{&EnglishFormat, &EnglishErrnoText};

bool SameArg(const MessageArg& a, const MessageArg& b) {
  if (a.index() != b.index()) return false;
  if (const auto* p = std::get_if<std::shared_ptr<const Message>>(&a)) {
    const auto& q = std::get<std::shared_ptr<const Message>>(b);
    return (!*p && !q) || (*p && q && **p == *q);
  }
  return a == b;
}

}  // namespace

Message Message::Literal(std::string text) { return Message("{}", {std::move(text)}); }

bool Message::operator==(const Message& other) const {
  if (id_ != other.id_ || plural_ != other.plural_ || n_ != other.n_ ||
      args_.size() != other.args_.size()) {
    return false;
  }
  for (size_t i = 0; i < args_.size(); ++i) {
    if (!SameArg(args_[i], other.args_[i])) return false;
  }
  return true;
}

Message JoinMessages(const std::vector<Message>& parts, std::string_view separator) {
  std::string escaped;  // fmt's braces doubled: the separator is text, not fields
  for (char c : separator) {
    escaped += c;
    if (c == '{' || c == '}') escaped += c;
  }
  std::string id;
  std::vector<MessageArg> args;
  for (const auto& part : parts) {
    id += (id.empty() ? "{}" : escaped + "{}");
    args.push_back(std::make_shared<const Message>(part));
  }
  return Message(std::move(id), std::move(args));
}

std::string RenderMessage(const Message& message, const MessageLanguage& language) {
  fmt::dynamic_format_arg_store<fmt::format_context> store;
  for (const auto& arg : message.args()) {
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, ByteCount>) {
            store.push_back(FormatBytes(v));
          } else if constexpr (std::is_same_v<V, ErrnoArg>) {
            store.push_back(language.errno_text(v.value));
          } else if constexpr (std::is_same_v<V, std::shared_ptr<const Message>>) {
            store.push_back(v ? RenderMessage(*v, language) : std::string());
          } else if constexpr (std::is_same_v<V, std::string>) {
            store.push_back(language.escape_controls ? EscapeControls(v) : v);
          } else {
            store.push_back(v);
          }
        },
        arg);
  }
  const std::string chosen = language.format_for(message);
  try {
    return fmt::vformat(chosen, store);
  } catch (const fmt::format_error&) {
    // A translation whose fields do not fit: say it in English instead.
  }
  try {
    return fmt::vformat(message.english_format(), store);
  } catch (const fmt::format_error&) {
    // Only a stored message edited by hand gets here: show its format as text.
  }
  return message.english_format();
}

std::string EnglishText(const Message& message) { return RenderMessage(message, kEnglish); }

std::vector<std::string> EnglishTexts(const std::vector<Message>& messages) {
  std::vector<std::string> out;
  out.reserve(messages.size());
  for (const Message& m : messages) out.push_back(EnglishText(m));
  return out;
}

nlohmann::json MessageToJson(const Message& message) {
  nlohmann::json args = nlohmann::json::array();
  for (const auto& arg : message.args()) {
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, int64_t>) {
            args.push_back({{"int", v}});
          } else if constexpr (std::is_same_v<V, uint64_t>) {
            args.push_back({{"uint", v}});
          } else if constexpr (std::is_same_v<V, double>) {
            args.push_back({{"double", v}});
          } else if constexpr (std::is_same_v<V, std::string>) {
            args.push_back({{"text", v}});
          } else if constexpr (std::is_same_v<V, ByteCount>) {
            args.push_back({{"bytes", v.bytes}, {"unit", UnitName(v.unit)}});
          } else if constexpr (std::is_same_v<V, ErrnoArg>) {
            args.push_back({{"errno", v.value}});
          } else {
            args.push_back({{"message", v ? MessageToJson(*v) : MessageToJson(Message())}});
          }
        },
        arg);
  }
  nlohmann::json out = {{"id", message.id()}, {"args", std::move(args)}};
  if (message.plural()) {
    out["plural"] = *message.plural();
    out["n"] = message.n();
  }
  return out;
}

std::optional<Message> MessageFromJson(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("id") || !json["id"].is_string()) return std::nullopt;
  std::vector<MessageArg> args;
  if (json.contains("args")) {
    if (!json["args"].is_array()) return std::nullopt;
    for (const auto& a : json["args"]) {
      if (!a.is_object()) return std::nullopt;
      if (a.contains("int") && a["int"].is_number_integer()) {
        args.emplace_back(a["int"].get<int64_t>());
      } else if (a.contains("uint") && a["uint"].is_number_unsigned()) {
        args.emplace_back(a["uint"].get<uint64_t>());
      } else if (a.contains("double") && a["double"].is_number()) {
        args.emplace_back(a["double"].get<double>());
      } else if (a.contains("text") && a["text"].is_string()) {
        args.emplace_back(a["text"].get<std::string>());
      } else if (a.contains("bytes") && a["bytes"].is_number_unsigned()) {
        const std::string unit = a.value("unit", "GB");
        const auto u = unit == "GiB"    ? ByteCount::Unit::kBinary
                       : unit == "both" ? ByteCount::Unit::kBoth
                                        : ByteCount::Unit::kDecimal;
        args.emplace_back(ByteCount{a["bytes"].get<uint64_t>(), u});
      } else if (a.contains("errno") && a["errno"].is_number_integer()) {
        args.emplace_back(ErrnoArg{a["errno"].get<int>()});
      } else if (a.contains("message")) {
        auto nested = MessageFromJson(a["message"]);
        if (!nested) return std::nullopt;
        args.emplace_back(std::make_shared<const Message>(std::move(*nested)));
      } else {
        return std::nullopt;
      }
    }
  }
  std::string id = json["id"].get<std::string>();
  if (json.contains("plural")) {
    if (!json["plural"].is_string() || !json.contains("n") || !json["n"].is_number_unsigned())
      return std::nullopt;
    return Message(std::move(id), json["plural"].get<std::string>(), json["n"].get<uint64_t>(),
                   std::move(args));
  }
  return Message(std::move(id), std::move(args));
}

}  // namespace headroom
