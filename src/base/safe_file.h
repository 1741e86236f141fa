// Files a user names on the command line, opened so that they can neither hang a command nor
// be destroyed by it (docs/cli.md "Input and output files").
//
// Inputs: OpenInput opens with O_NONBLOCK (a FIFO cannot wait for a writer) and checks the
// descriptor it got with fstat, so the thing checked is the thing read: anything but a
// regular file (a FIFO, a device, a socket, a directory) is a one-line error.
//
// Outputs: a file written whole (a report, env-report.json) replaces only a regular file or
// nothing: never a device, a FIFO, a directory or a symbolic link, and never one of the
// command's inputs (compared by st_dev and st_ino, so two names for one file are caught). It
// is written to a temporary file beside the target, created O_CREAT|O_EXCL|O_NOFOLLOW, then
// fsync'd and renamed over it. An output written as it goes (events, logs, a CSV) is opened
// O_NOFOLLOW and checked regular. CheckOutputPath runs the same checks before any work.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/result.h"

namespace headroom {

// A file descriptor closed by its destructor; -1 holds nothing.
class FileFd {
 public:
  FileFd() = default;
  explicit FileFd(int fd) : fd_(fd) {}
  FileFd(FileFd&& other) noexcept : fd_(other.release()) {}
  FileFd& operator=(FileFd&& other) noexcept;
  FileFd(const FileFd&) = delete;
  FileFd& operator=(const FileFd&) = delete;
  ~FileFd();

  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

// What a file of type `mode` is, for a message ("a FIFO", "a directory", "a character
// device", ...), as a message value.
Message FileKind(mode_t mode);

// Why OpenRegularFile refused: the step that failed with its errno, or the file's type.
struct OpenFailure {
  enum class Step { kOpen, kFstat, kNotRegular };
  Step step = Step::kOpen;
  int errno_value = 0;  // kOpen, kFstat
  mode_t mode = 0;      // kNotRegular
};

// The one open-and-check of every reader (OpenInput here, sys/sysroot.h's kernel files):
// open(O_RDONLY | O_CLOEXEC | O_NONBLOCK), so a FIFO cannot wait for a writer, then fstat on
// that descriptor: a regular file only. O_NONBLOCK stays set (a regular file never blocks).
// On failure an empty FileFd and `*failure` says why; each caller words its own error.
FileFd OpenRegularFile(const char* path, OpenFailure* failure);

// Opens `path` read-only: a regular file only. Errors: "open(PATH): <reason>" (ELOOP for a
// symbolic-link loop included), "PATH: a FIFO, not a regular file".
Result<FileFd> OpenInput(const std::string& path);

// The whole of the regular file `path`, up to `max_bytes` (an error beyond).
Result<std::string> ReadInputFile(const std::string& path, size_t max_bytes);

// The checks an output gets before any work starts: `path` names nothing or a regular file
// (not a symbolic link, a device, a FIFO, a socket or a directory), its directory exists, and
// it is none of `inputs` (empty strings in `inputs` are skipped).
std::optional<Error> CheckOutputPath(const std::string& path,
                                     std::span<const std::string> inputs = {});

// Writes `text` to `path` through a temporary file beside it and a rename, after
// CheckOutputPath(path, inputs) (checked again just before the rename). The temporary file is
// fsync'd before the rename and removed on every failure.
std::optional<Error> ReplaceFile(const std::string& path, std::string_view text,
                                 std::span<const std::string> inputs = {});

// How OpenOutput treats what is already in the file.
enum class OutputMode { kAppend, kTruncate };

// Opens `path` for writing as it goes (events, a log, a CSV), created mode 0644 (less the
// umask) when missing: O_NOFOLLOW, O_NONBLOCK (cleared after the open) and O_APPEND, then
// checked regular with fstat.
Result<FileFd> OpenOutput(const std::string& path, OutputMode mode);

// OpenOutput(path, kAppend) as a stdio stream ("a", close-on-exec), for writers that take a
// FILE* (the guard's events); the caller fcloses it.
Result<std::FILE*> OpenAppendStream(const std::string& path);

// Writes all of `bytes` to `fd`, retried on EINTR and a short write; an error names `path`
// ("write(PATH): No space left on device").
std::optional<Error> WriteAll(int fd, std::string_view bytes, const std::string& path);

// The first pair of `paths` (empty ones skipped) that name one file, by name or by st_dev and
// st_ino: "PATH and PATH2 are the same file; give each output its own".
std::optional<Error> CheckDistinctOutputs(std::span<const std::string> paths);

// Creates `dir` and the folders above it that are missing, each mode 0700 whatever the umask
// (mkdir then chmod: a umask of 000 must not make a folder of logs world-writable, one of 0200
// must not make it unwritable); folders that exist are left as they are. Error: the first
// mkdir or chmod that failed, or a path component that is not a folder.
std::optional<Error> CreatePrivateDirectories(const std::string& dir);

// An output and the flag that names it, for CheckOutputPaths' messages.
struct NamedOutput {
  std::string flag;  // "--out"
  std::string path;  // "" for an output not asked for
};

// All of a command's outputs before any work starts, each error after its flag ("--events:
// PATH: a FIFO; ..."): what exists at each path is a regular file (CheckOutputPath without the
// directory check: a missing directory is left to the open, which names it), none is one of
// `inputs`, and no two are one file.
std::optional<Error> CheckOutputPaths(std::span<const NamedOutput> outputs,
                                      std::span<const std::string> inputs = {});

}  // namespace headroom
