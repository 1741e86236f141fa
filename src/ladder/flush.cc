// Implementation notes: the job is found by its command line, not by a pid file, because
// the ladder works between runs of jobs that headroom may not have started; the match is a
// plain substring so `--match` can name a script, a config or a run directory.
#include "ladder/flush.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "sys/processes.h"

namespace headroom {

bool CmdlineMatchesJob(const std::vector<std::string>& argv, std::string_view match) {
  if (argv.empty() || match.empty()) return false;
  const std::string program = std::filesystem::path(argv[0]).filename().string();
  if (program == "headroom" && argv.size() > 1 && argv[1] == "ladder") return false;
  std::string joined;
  for (const auto& arg : argv) joined += (joined.empty() ? "" : " ") + arg;
  return joined.find(match) != std::string::npos;
}

std::vector<JobProcess> FindJobProcesses(const SysRoot& root, std::string_view match, pid_t self) {
  std::vector<JobProcess> found;
  for (const pid_t pid : ListPids(root)) {
    if (pid == self) continue;
    auto text = root.ReadFile("proc/" + std::to_string(pid) + "/cmdline");
    if (!text) continue;  // gone, or a kernel thread we may not read
    const auto argv = ParseCmdline(*text);
    if (!CmdlineMatchesJob(argv, match)) continue;
    std::string joined;
    for (const auto& arg : argv) joined += (joined.empty() ? "" : " ") + arg;
    found.push_back({pid, joined});
  }
  return found;
}

Result<bool> DropPageCache(const SysRoot& root) {
  // Dirty pages cannot be dropped; sync first writes them back so the flush frees them too.
  ::sync();
  const std::string path = root.Path(kDropCachesPath).string();
  // O_TRUNC: procfs ignores it; a fixture file keeps nothing of what it held.
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return ErrnoError("open(" + path + ")");
  const ssize_t n = ::write(fd, "3", 1);
  const int write_errno = errno;
  ::close(fd);
  if (n != 1) return ErrnoError("write(" + path + ")", n < 0 ? write_errno : EIO);
  return true;
}

}  // namespace headroom
