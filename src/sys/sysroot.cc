#include "sys/sysroot.h"

#include <unistd.h>

#include <cerrno>

#include "base/message.h"
#include "base/safe_file.h"

namespace headroom {

Result<std::string> SysRoot::ReadFile(std::string_view relative, size_t max_bytes) const {
  return ReadFileCapped(Path(relative), max_bytes);
}

int OpenKernelFile(const std::filesystem::path& path) {
  OpenFailure why;
  FileFd fd = OpenRegularFile(path.c_str(), &why);
  if (fd.get() < 0) {
    errno = why.step == OpenFailure::Step::kOpen ? why.errno_value : EINVAL;
    return -1;
  }
  return fd.release();
}

Result<std::string> ReadFileCapped(const std::filesystem::path& file, size_t max_bytes) {
  const std::string path = file.string();
  OpenFailure why;
  const FileFd fd = OpenRegularFile(path.c_str(), &why);
  if (fd.get() < 0) {
    switch (why.step) {
      case OpenFailure::Step::kOpen:
        return ErrnoError(Msg("cannot read {}: open", path), why.errno_value);
      case OpenFailure::Step::kFstat:
        return ErrnoError(Msg("cannot read {}: fstat", path), why.errno_value);
      case OpenFailure::Step::kNotRegular:
        break;
    }
    return Error{Msg("{0}: {1}, not a regular file", path, FileKind(why.mode))};
  }
  std::string out;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(Msg("cannot read {}: read", path));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes)
      return Error{Msg("cannot read {}: file larger than {} bytes", path, max_bytes)};
  }
  return out;
}

}  // namespace headroom
