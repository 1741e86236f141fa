// Message values: a sentence for people, kept as data until it is printed (docs/style.md
// rule 15, "words at the edge").
//
// A Message is an English fmt format string (the gettext msgid, marked for xgettext where it
// is written) and typed arguments. The library returns Messages; it never translates. Two
// renderers turn one into text:
//
//   EnglishText(m)     here, in base/: every file a program reads (JSON, CSV, events, the
//                      journal). The same bytes in every locale, strerror included.
//   TranslatedText(m)  in cli/message_text.h: the terminal, in the user's language.
//
// Arguments keep their type until render time, so what depends on the language is done by
// the renderer: an errno becomes strerror's text (English, or in LC_MESSAGES' language), a
// nested Message (a verdict word, a wrapped error) is rendered by the same renderer, and a
// byte count is formatted then (FormatGB, FormatGiB, FormatBoth).
//
// Marking, for xgettext (scripts/update-pot): Msg("text {}", v) and MsgPlural("one {}",
// "{} many", n, n) are keywords; a literal chosen from a table is marked N_ and passed to
// Msg(kText) later.
//
// Stored form (MessageToJson): {"id": "...", "args": [{"int": 5}, {"text": "x"}, ...]} plus
// "plural" and "n" for a plural. The journal keeps it beside the English text, so a reader
// re-renders a recorded sentence in its own language (docs/journal.md).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace headroom {

class Message;

// A byte count, formatted when the message is rendered.
struct ByteCount {
  enum class Unit { kDecimal, kBinary, kBoth };  // FormatGB, FormatGiB, FormatBoth
  uint64_t bytes = 0;
  Unit unit = Unit::kDecimal;
  bool operator==(const ByteCount&) const = default;
};
inline ByteCount GB(uint64_t bytes) { return {bytes, ByteCount::Unit::kDecimal}; }
inline ByteCount GiB(uint64_t bytes) { return {bytes, ByteCount::Unit::kBinary}; }
inline ByteCount BothUnits(uint64_t bytes) { return {bytes, ByteCount::Unit::kBoth}; }

// An errno value, rendered as strerror's text in the renderer's language.
struct ErrnoArg {
  int value = 0;
  bool operator==(const ErrnoArg&) const = default;
};

// One argument. Text is shown as it is in every language (names, paths, identifiers, a
// record read back); a nested Message is rendered in the renderer's language.
using MessageArg = std::variant<int64_t, uint64_t, double, std::string, ByteCount, ErrnoArg,
                                std::shared_ptr<const Message>>;

class Message {
 public:
  Message() = default;
  // `id`: an English fmt format string; `args` fill its fields in order.
  explicit Message(std::string id, std::vector<MessageArg> args = {})
      : id_(std::move(id)), args_(std::move(args)) {}
  Message(std::string singular, std::string plural, uint64_t n, std::vector<MessageArg> args)
      : id_(std::move(singular)), plural_(std::move(plural)), n_(n), args_(std::move(args)) {}

  // Text shown as it is in every language: a record written before messages were stored,
  // a third party's text (SQLite's, a parser's), an identifier.
  static Message Literal(std::string text);

  const std::string& id() const { return id_; }
  const std::optional<std::string>& plural() const { return plural_; }
  uint64_t n() const { return n_; }
  const std::vector<MessageArg>& args() const { return args_; }
  bool empty() const { return id_.empty() && !plural_; }
  // The English format string for n (the plural form when it has one and n != 1).
  const std::string& english_format() const { return plural_ && n_ != 1 ? *plural_ : id_; }

  bool operator==(const Message& other) const;

 private:
  std::string id_;
  std::optional<std::string> plural_;
  uint64_t n_ = 0;
  std::vector<MessageArg> args_;
};

namespace message_detail {
// The type a Msg argument is checked as at compile time: what is rendered as text (a nested
// message, a byte count, an errno, an argument chosen at run time) is checked as text.
template <typename T>
using CheckedAs = std::conditional_t<std::is_same_v<std::remove_cvref_t<T>, Message> ||
                                         std::is_same_v<std::remove_cvref_t<T>, ByteCount> ||
                                         std::is_same_v<std::remove_cvref_t<T>, ErrnoArg> ||
                                         std::is_same_v<std::remove_cvref_t<T>, MessageArg>,
                                     std::string_view, T>;

template <typename T>
MessageArg ToArg(T&& value) {
  using V = std::remove_cvref_t<T>;
  if constexpr (std::is_same_v<V, MessageArg>) {
    return std::forward<T>(value);
  } else if constexpr (std::is_same_v<V, bool>) {
    static_assert(!std::is_same_v<V, bool>, "say it in words: pass a Message");
  } else if constexpr (std::is_integral_v<V> && std::is_signed_v<V>) {
    return int64_t{value};
  } else if constexpr (std::is_integral_v<V>) {
    return uint64_t{value};
  } else if constexpr (std::is_floating_point_v<V>) {
    return double{value};
  } else if constexpr (std::is_same_v<V, Message>) {
    return std::make_shared<const Message>(std::forward<T>(value));
  } else if constexpr (std::is_same_v<V, ByteCount> || std::is_same_v<V, ErrnoArg>) {
    return value;
  } else {
    return std::string(std::string_view(value));
  }
}
}  // namespace message_detail

// A message with its arguments. The English format is checked against the arguments at
// compile time (a Message's argument is checked as text).
template <typename... Args>
Message Msg(fmt::format_string<message_detail::CheckedAs<Args>...> id, Args&&... args) {
  const fmt::string_view english = id;
  return Message(std::string(english.data(), english.size()),
                 {message_detail::ToArg(std::forward<Args>(args))...});
}

// A message with a singular and a plural form, chosen by `n` (the catalog's Plural-Forms
// in a translation; English: n == 1 is the singular).
template <typename... Args>
Message MsgPlural(const char* singular, const char* plural, uint64_t n, Args&&... args) {
  return Message(singular, plural, n, {message_detail::ToArg(std::forward<Args>(args))...});
}

// A message whose id is not a literal (a table's N_ entry): not checked at compile time;
// a format that does not fit its arguments renders as the id itself.
template <typename... Args>
Message MsgFrom(std::string_view id, Args&&... args) {
  return Message(std::string(id), {message_detail::ToArg(std::forward<Args>(args))...});
}

// `parts` rendered one after the other, `separator` between them (a list of advice lines
// stored as one journal entry). The separator is the same in every language.
Message JoinMessages(const std::vector<Message>& parts, std::string_view separator);

// The English text: the renderer for everything a program reads.
std::string EnglishText(const Message& message);
// Each of `messages` in English (a JSON list of errors or notes).
std::vector<std::string> EnglishTexts(const std::vector<Message>& messages);

// A renderer's choices: how to translate a format (or return it), and strerror's text.
// EnglishText and TranslatedText (cli/) are the two; tests may make others.
struct MessageLanguage {
  // The format string to use for `m` (its translation, or m.english_format()).
  std::string (*format_for)(const Message& m);
  // strerror's text for an errno value.
  std::string (*errno_text)(int value);
  // Text arguments with their control characters escaped (EscapeControls, base/text.h): the
  // terminal's renderer, where a file's value or a peer's reply must not reach it raw. Files
  // keep the text as it is (their own format quotes it).
  bool escape_controls = false;
};
// Renders with `language`; a format that does not fit the arguments (a broken translation)
// falls back to the English format, and one that still does not fit to the id as it is.
std::string RenderMessage(const Message& message, const MessageLanguage& language);

// The stored form (see above) and back. A malformed form is nullopt: the caller shows what
// it has as literal text.
nlohmann::json MessageToJson(const Message& message);
std::optional<Message> MessageFromJson(const nlohmann::json& json);

}  // namespace headroom

// Marks a literal for extraction without making a message of it here (a table of static
// strings, rendered later through MsgFrom or a label function). The same as cli/i18n.h's.
#define N_(text) text
