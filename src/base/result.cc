#include "base/result.h"

namespace headroom {

Error::Error(Message what_, int errno_value_) : what(std::move(what_)), errno_value(errno_value_) {}

Error::Error(std::string text, int errno_value_)
    : Error(Message::Literal(std::move(text)), errno_value_) {}

Error::Error(const char* text, int errno_value_) : Error(std::string(text), errno_value_) {}

Error ErrnoError(const Message& what, int errno_value) {
  // Not marked: the shape of every errno error, the same in every language.
  return Error(Message("{}: {}", {std::make_shared<const Message>(what), ErrnoArg{errno_value}}),
               errno_value);
}

Error ErrnoError(const std::string& what, int errno_value) {
  return ErrnoError(Message::Literal(what), errno_value);
}

Error InContext(std::string context, const Error& inner) {
  return Error(Message("{}: {}", {std::move(context), std::make_shared<const Message>(inner.what)}),
               inner.errno_value);
}

}  // namespace headroom
