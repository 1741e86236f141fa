// Implementation notes: every input is opened with O_NONBLOCK and checked with fstat on the
// descriptor, never with a stat of the name before it (a FIFO swapped in between could still
// hang a blocking open). An output is looked at with lstat first, so a symbolic link, a FIFO
// or a device is refused by name before anything opens it (opening a FIFO for writing
// without a reader fails ENXIO, a message nobody could act on); the open then carries
// O_NOFOLLOW and fstat checks again what was opened. The temporary file of ReplaceFile is
// created O_EXCL, so a name planted beside the target (a symbolic link to /etc/passwd) is
// never written through: another name is tried.
#include "base/safe_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace headroom {

FileFd& FileFd::operator=(FileFd&& other) noexcept {
  if (this != &other) reset(other.release());
  return *this;
}

FileFd::~FileFd() { reset(); }

void FileFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

Message FileKind(mode_t mode) {
  if (S_ISREG(mode)) return Msg("a regular file");
  if (S_ISDIR(mode)) return Msg("a directory");
  if (S_ISFIFO(mode)) return Msg("a FIFO");
  if (S_ISSOCK(mode)) return Msg("a socket");
  if (S_ISCHR(mode)) return Msg("a character device");
  if (S_ISBLK(mode)) return Msg("a block device");
  if (S_ISLNK(mode)) return Msg("a symbolic link");
  return Msg("not a regular file");
}

FileFd OpenRegularFile(const char* path, OpenFailure* failure) {
  FileFd fd(::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) {
    *failure = {OpenFailure::Step::kOpen, errno, 0};
    return fd;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    *failure = {OpenFailure::Step::kFstat, errno, 0};
    return FileFd();
  }
  if (!S_ISREG(st.st_mode)) {
    *failure = {OpenFailure::Step::kNotRegular, 0, st.st_mode};
    return FileFd();
  }
  return fd;
}

Result<FileFd> OpenInput(const std::string& path) {
  OpenFailure why;
  FileFd fd = OpenRegularFile(path.c_str(), &why);
  if (fd.get() < 0) {
    switch (why.step) {
      case OpenFailure::Step::kOpen:
        return ErrnoError("open(" + path + ")", why.errno_value);
      case OpenFailure::Step::kFstat:
        return ErrnoError("fstat(" + path + ")", why.errno_value);
      case OpenFailure::Step::kNotRegular:
        break;
    }
    return Error{Msg("{0}: {1}, not a regular file", path, FileKind(why.mode))};
  }
  // A regular file never blocks; clear the flag so later reads behave as usual.
  (void)::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  return fd;
}

Result<std::string> ReadInputFile(const std::string& path, size_t max_bytes) {
  auto fd = OpenInput(path);
  if (!fd) return fd.error();
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd->get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("read(" + path + ")");
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > max_bytes) return Error{Msg("{}: larger than {} bytes", path, max_bytes)};
  }
  return text;
}

namespace {

// Whether `a` (lstat'ed) and the file `b` names (stat'ed, links followed) are one file.
bool SameFile(const struct stat& a, const std::string& b) {
  struct stat sb {};
  if (::stat(b.c_str(), &sb) != 0) return false;
  return a.st_dev == sb.st_dev && a.st_ino == sb.st_ino;
}

bool SameName(const std::string& a, const std::string& b) {
  return std::filesystem::path(a).lexically_normal() == std::filesystem::path(b).lexically_normal();
}

Error SameAsInput(const std::string& path, const std::string& input) {
  return Error{
      Msg("{0}: the same file as the input {1}; writing it would destroy the input", path, input)};
}

Error RefuseKind(const std::string& path, mode_t mode) {
  return Error{
      Msg("{0}: {1}; an output replaces only a regular file or nothing", path, FileKind(mode))};
}

// CheckOutputPath but for its directory: `missing` says whether nothing is at `path`.
std::optional<Error> CheckExistingOutput(const std::string& path,
                                         std::span<const std::string> inputs,
                                         bool* missing = nullptr) {
  if (path.empty()) return Error{Msg("an output path is empty")};
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return ErrnoError("lstat(" + path + ")");
    if (missing) *missing = true;
    // Nothing there yet, but an input not made yet either (a journal) may have this name.
    for (const std::string& input : inputs) {
      if (!input.empty() && SameName(path, input)) return SameAsInput(path, input);
    }
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) return RefuseKind(path, st.st_mode);
  for (const std::string& input : inputs) {
    if (!input.empty() && (SameName(path, input) || SameFile(st, input)))
      return SameAsInput(path, input);
  }
  return std::nullopt;
}

}  // namespace

std::optional<Error> CheckOutputPath(const std::string& path, std::span<const std::string> inputs) {
  bool missing = false;
  if (auto refused = CheckExistingOutput(path, inputs, &missing)) return refused;
  if (!missing) return std::nullopt;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  struct stat dir {};
  if (!parent.empty() && (::stat(parent.c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode)))
    return Error{Msg("{}: directory {} does not exist", path, parent.string())};
  return std::nullopt;
}

namespace {

// A temporary file beside `path`, created O_EXCL: a name that is taken (by anything, a
// symbolic link included) is skipped.
Result<FileFd> CreateTemporaryBeside(const std::string& path, std::string& tmp) {
  const auto seed =
      static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count());
  for (int attempt = 0; attempt < 16; ++attempt) {
    tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(seed % 1000000) + "-" +
          std::to_string(attempt);
    FileFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666));
    if (fd.get() >= 0) return fd;
    if (errno != EEXIST) return ErrnoError("open(" + tmp + ")");
  }
  return Error{Msg("{}: no free temporary name beside it", path)};
}

}  // namespace

std::optional<Error> ReplaceFile(const std::string& path, std::string_view text,
                                 std::span<const std::string> inputs) {
  if (auto refused = CheckOutputPath(path, inputs)) return refused;
  std::string tmp;
  auto fd = CreateTemporaryBeside(path, tmp);
  if (!fd) return fd.error();
  auto fail = [&](Error e) -> std::optional<Error> {
    ::unlink(tmp.c_str());
    return e;
  };
  if (auto e = WriteAll(fd->get(), text, tmp)) return fail(*e);
  if (::fsync(fd->get()) != 0) return fail(ErrnoError("fsync(" + tmp + ")"));
  if (::close(fd->release()) != 0) return fail(ErrnoError("close(" + tmp + ")"));
  // Again just before the rename: the target may have changed while the text was written.
  if (auto refused = CheckOutputPath(path, inputs)) return fail(*refused);
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return fail(ErrnoError("rename(" + tmp + ", " + path + ")"));
  return std::nullopt;
}

Result<FileFd> OpenOutput(const std::string& path, OutputMode mode) {
  if (path.empty()) return Error{Msg("an output path is empty")};
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return RefuseKind(path, st.st_mode);
  FileFd fd(::open(path.c_str(),
                   O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644));
  if (fd.get() < 0) return ErrnoError("open(" + path + ")");
  if (::fstat(fd.get(), &st) != 0) return ErrnoError("fstat(" + path + ")");
  if (!S_ISREG(st.st_mode)) return RefuseKind(path, st.st_mode);
  (void)::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  if (mode == OutputMode::kTruncate && ::ftruncate(fd.get(), 0) != 0)
    return ErrnoError("ftruncate(" + path + ")");
  return fd;
}

Result<std::FILE*> OpenAppendStream(const std::string& path) {
  auto fd = OpenOutput(path, OutputMode::kAppend);
  if (!fd) return fd.error();
  std::FILE* file = ::fdopen(fd->get(), "ae");
  if (file == nullptr) return ErrnoError("fdopen(" + path + ")");
  (void)fd->release();  // the stream owns it now
  return file;
}

std::optional<Error> WriteAll(int fd, std::string_view bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("write(" + path + ")");
    }
    done += static_cast<size_t>(n);
  }
  return std::nullopt;
}

std::optional<Error> CheckDistinctOutputs(std::span<const std::string> paths) {
  for (size_t i = 0; i < paths.size(); ++i) {
    if (paths[i].empty()) continue;
    struct stat a {};
    const bool exists = ::stat(paths[i].c_str(), &a) == 0;
    for (size_t j = i + 1; j < paths.size(); ++j) {
      if (paths[j].empty()) continue;
      if (SameName(paths[i], paths[j]) || (exists && SameFile(a, paths[j])))
        return Error{
            Msg("{0} and {1} are the same file; give each output its own", paths[i], paths[j])};
    }
  }
  return std::nullopt;
}

std::optional<Error> CreatePrivateDirectories(const std::string& dir) {
  std::filesystem::path so_far;
  for (const auto& part : std::filesystem::path(dir)) {
    so_far /= part;
    if (part.empty() || part == "/" || part == "." || part == "..") continue;
    if (::mkdir(so_far.c_str(), 0700) == 0) {
      if (::chmod(so_far.c_str(), 0700) != 0) return ErrnoError("chmod(" + so_far.string() + ")");
      continue;
    }
    if (errno != EEXIST) return ErrnoError("mkdir(" + so_far.string() + ")");
    struct stat st {};
    if (::stat(so_far.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return ErrnoError("mkdir(" + so_far.string() + ")", ENOTDIR);
  }
  return std::nullopt;
}

std::optional<Error> CheckOutputPaths(std::span<const NamedOutput> outputs,
                                      std::span<const std::string> inputs) {
  std::vector<std::string> paths;
  for (const NamedOutput& out : outputs) {
    paths.push_back(out.path);
    if (out.path.empty()) continue;
    if (auto refused = CheckExistingOutput(out.path, inputs)) return InContext(out.flag, *refused);
  }
  return CheckDistinctOutputs(paths);
}

}  // namespace headroom
