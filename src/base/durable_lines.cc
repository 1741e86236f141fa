// Implementation notes: fdatasync, not fsync: the size change that makes new lines visible
// is metadata fdatasync does flush (it skips only timestamps), and it is cheaper on ext4.
// The steady clock times the period, so a wall-clock step cannot stop the syncs.
#include "base/durable_lines.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "base/safe_file.h"

namespace headroom {

Result<DurableLines> DurableLines::Create(const std::filesystem::path& path,
                                          std::chrono::milliseconds sync_period) {
  // A regular file or nothing: never through a symbolic link, never a FIFO or a device
  // (base/safe_file.h).
  auto fd = OpenOutput(path.string(), OutputMode::kTruncate);
  if (!fd) return fd.error();
  DurableLines f;
  f.fd_ = fd->release();
  f.path_ = path;
  f.sync_period_ = sync_period;
  f.last_sync_ = std::chrono::steady_clock::now();
  return f;
}

DurableLines::DurableLines(DurableLines&& other) noexcept { *this = std::move(other); }

DurableLines& DurableLines::operator=(DurableLines&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    sync_period_ = other.sync_period_;
    last_sync_ = other.last_sync_;
    dirty_ = other.dirty_;
    syncs_ = other.syncs_;
    first_error_ = std::move(other.first_error_);
  }
  return *this;
}

DurableLines::~DurableLines() {
  if (fd_ < 0) return;
  if (dirty_) (void)::fdatasync(fd_);
  ::close(fd_);
}

Result<size_t> DurableLines::Append(std::string_view line) {
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Failed(ErrnoError("write(" + path_.string() + ")"));
    }
    done += static_cast<size_t>(n);
  }
  dirty_ = true;
  if (std::chrono::steady_clock::now() - last_sync_ >= sync_period_) {
    auto synced = Sync();
    if (!synced) return synced.error();
  }
  return done;
}

Error DurableLines::Failed(Error error) {
  if (!first_error_) first_error_ = error;
  return error;
}

Result<size_t> DurableLines::Sync() {
  last_sync_ = std::chrono::steady_clock::now();
  if (!dirty_) return size_t{0};
  if (::fdatasync(fd_) != 0) return Failed(ErrnoError("fdatasync(" + path_.string() + ")"));
  dirty_ = false;
  ++syncs_;
  return size_t{1};
}

std::optional<Error> FirstWriteError(std::initializer_list<const DurableLines*> files) {
  for (const DurableLines* f : files) {
    if (f && f->first_error()) return f->first_error();
  }
  return std::nullopt;
}

}  // namespace headroom
