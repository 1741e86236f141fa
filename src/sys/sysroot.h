// SysRoot: where /proc and /sys live. Every reader of kernel files takes one, so tests and
// `--root DIR` point the same code at a fixture tree (docs/style.md rule 3). The literal "/" is
// chosen in main and nowhere below it.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "base/result.h"

namespace headroom {

class SysRoot {
 public:
  explicit SysRoot(std::filesystem::path root) : root_(std::move(root)) {}

  // The path of a kernel file below the root: Path("proc/meminfo").
  std::filesystem::path Path(std::string_view relative) const { return root_ / relative; }
  const std::filesystem::path& root() const { return root_; }

  // Reads a whole (small) kernel file. Files in /proc report size 0, so this reads until
  // EOF with a cap (`max_bytes`) that turns a hostile fixture into an error, not a hang.
  Result<std::string> ReadFile(std::string_view relative, size_t max_bytes = 1 << 20) const;

 private:
  std::filesystem::path root_;
};

// Opens a kernel file (or anything a reader treats as one) read-only: O_NONBLOCK, so a FIFO
// planted in a fixture tree cannot hang it, then fstat: anything but a regular file (FIFO,
// socket, device, directory) is refused with errno EINVAL. /proc, /sys and cgroup files are
// regular files. -1 on failure, errno set; the caller closes the descriptor.
int OpenKernelFile(const std::filesystem::path& path);

// Whether `root` is the machine's own (/), not a --root tree: only then may a command write
// a kernel file below it (a PSI trigger, its own oom_score_adj); --root is read-only.
inline bool IsLiveRoot(const SysRoot& root) { return root.root() == std::filesystem::path("/"); }

// The same read for a path outside any root (a Python environment, a config file): the
// whole file up to `max_bytes`, an error beyond it. Never blocks on a FIFO.
Result<std::string> ReadFileCapped(const std::filesystem::path& path, size_t max_bytes = 1 << 20);

}  // namespace headroom
