#include "sys/sysroot.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace headroom {

Result<std::string> SysRoot::ReadFile(std::string_view relative, size_t max_bytes) const {
  const std::string path = Path(relative).string();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot read " + path + ": open");
  std::string out;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int saved = errno;
      ::close(fd);
      return ErrnoError("cannot read " + path + ": read", saved);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      ::close(fd);
      return Error{"cannot read " + path + ": file larger than " + std::to_string(max_bytes) +
                   " bytes"};
    }
  }
  ::close(fd);
  return out;
}

}  // namespace headroom
