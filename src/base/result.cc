#include "base/result.h"

#include <cstring>

namespace headroom {

Error ErrnoError(const std::string& what, int errno_value) {
  return Error{what + ": " + std::strerror(errno_value), errno_value};
}

}  // namespace headroom
