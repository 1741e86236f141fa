#include "sys/sysroot.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/message.h"
#include "base/safe_file.h"

namespace headroom {

Result<std::string> SysRoot::ReadFile(std::string_view relative, size_t max_bytes) const {
  return ReadFileCapped(Path(relative), max_bytes);
}

int OpenKernelFile(const std::filesystem::path& path) {
  // O_NONBLOCK: a FIFO planted where a file should be must not hang the reader.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    errno = EINVAL;
    return -1;
  }
  return fd;
}

Result<std::string> ReadFileCapped(const std::filesystem::path& file, size_t max_bytes) {
  const std::string path = file.string();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return ErrnoError(Msg("cannot read {}: open", path));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error{Msg("{0}: {1}, not a regular file", path, FileKind(st.st_mode))};
  }
  std::string out;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) break;  // an empty FIFO: nothing to read
      const int saved = errno;
      ::close(fd);
      return ErrnoError(Msg("cannot read {}: read", path), saved);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      ::close(fd);
      return Error{Msg("cannot read {}: file larger than {} bytes", path, max_bytes)};
    }
  }
  ::close(fd);
  return out;
}

}  // namespace headroom
