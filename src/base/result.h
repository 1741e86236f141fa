// Result<T>: a value or an Error that carries errno and a one-line message.
//
// The error policy of the library (docs/style.md rule 8): expected runtime failures (a file
// missing, a value out of range, a parser given hostile text) come back as a Result; no
// exception crosses a module boundary. The CLI turns an Error into
// `headroom: <message>` and a documented exit status.
#pragma once

#include <cerrno>
#include <string>
#include <utility>
#include <variant>

namespace headroom {

struct Error {
  std::string message;  // "what failed: operation(argument): reason", lower case
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

// Builds an Error from the current errno: "<what>: <strerror>".
Error ErrnoError(const std::string& what, int errno_value = errno);

}  // namespace headroom
