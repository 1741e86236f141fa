// Result<T>: a value or an Error that carries errno and a message value.
//
// The error policy of the library (docs/style.md rule 8): expected runtime failures (a file
// missing, a value out of range, a parser given hostile text) come back as a Result; no
// exception crosses a module boundary. The CLI turns an Error into
// `headroom: <message>` and a documented exit status.
//
// An Error's text is a Message (base/message.h): an English format and typed arguments, an
// errno kept as ErrnoArg, so strerror and the language are chosen when it is printed
// (TranslatedText on the terminal, EnglishText in files and JSON). An error that wraps
// another nests its Message: Error{Msg("reading {}: {}", path, inner.what)}.
#pragma once

#include <cerrno>
#include <string>
#include <utility>
#include <variant>

#include "base/message.h"

namespace headroom {

struct Error {
  Error() = default;
  // What failed, as a message value: "what failed: operation(argument): reason", lower case.
  Error(Message what, int errno_value = 0);  // NOLINT: implicit by design
  // A finished text, shown as it is in every language (a third party's text).
  explicit Error(std::string text, int errno_value = 0);
  explicit Error(const char* text, int errno_value = 0);

  Message what;
  int errno_value = 0;  // 0 when the failure is not a system call's
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { return std::get<Error>(state_); }

 private:
  std::variant<T, Error> state_;
};

// An Error from errno: "<what>: <strerror>", strerror rendered when the error is printed.
Error ErrnoError(const Message& what, int errno_value = errno);
Error ErrnoError(const std::string& what, int errno_value = errno);

// `inner` after "<context>: ", its errno kept: "model/config.json: not JSON: ...".
Error InContext(std::string context, const Error& inner);

}  // namespace headroom
