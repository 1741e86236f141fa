#include "sys/memory_lock.h"

#include <sys/mman.h>

#include <cerrno>

namespace headroom {

std::optional<int> LockOwnPagesOnFault() {
#ifdef MCL_ONFAULT
  const int flags = MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT;
#else
  const int flags = MCL_CURRENT | MCL_FUTURE;
#endif
  if (::mlockall(flags) != 0) return errno;
  return std::nullopt;
}

}  // namespace headroom
