#include "guard/job_cgroup.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>

#include "guard/pidfd.h"
#include "sys/processes.h"

namespace headroom {
namespace {

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    const size_t at = s.find(sep, start);
    out.push_back(
        s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return out;
}

std::optional<std::string> ReadSmall(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// How many names a guard tries: `name`, then `name`-1 ... -15.
constexpr int kMaxNames = 16;

// A directory of this process's own below `base`'s parent: `base`, else `base`-1, -2 ... A
// directory of that name left by an earlier process with the same PID is never adopted: when
// it holds no process and no child group, rmdir removes it and it is made afresh (its owner
// is gone: it had this PID); when it still holds processes (an orphaned job), the next name.
// nullopt with errno set when none could be made.
std::optional<std::string> MakeOwnDir(const std::string& base) {
  for (int n = 0; n < kMaxNames; ++n) {
    const std::string dir = n == 0 ? base : fmt::format("{}-{}", base, n);
    if (::mkdir(dir.c_str(), 0755) == 0) return dir;
    if (errno != EEXIST) return std::nullopt;
    if (::rmdir(dir.c_str()) == 0 && ::mkdir(dir.c_str(), 0755) == 0) return dir;
  }
  errno = EEXIST;
  return std::nullopt;
}

}  // namespace

CgroupMounts ParseCgroupMounts(std::string_view text) {
  CgroupMounts m;
  for (std::string_view line : Split(text, '\n')) {
    const auto f = Split(line, ' ');
    if (f.size() < 4) continue;
    if (f[2] == "cgroup2" && m.v2.empty()) m.v2 = std::string(f[1]);
    if (f[2] == "cgroup" && m.v1_memory.empty()) {
      for (std::string_view opt : Split(f[3], ',')) {
        if (opt == "memory") m.v1_memory = std::string(f[1]);
      }
    }
  }
  return m;
}

CgroupPaths ParseProcCgroup(std::string_view text) {
  CgroupPaths p;
  for (std::string_view line : Split(text, '\n')) {
    const size_t a = line.find(':');
    const size_t b = a == std::string_view::npos ? a : line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    const std::string_view id = line.substr(0, a);
    const std::string_view controllers = line.substr(a + 1, b - a - 1);
    const std::string path(line.substr(b + 1));
    if (id == "0" && controllers.empty()) p.v2 = path;
    for (std::string_view c : Split(controllers, ',')) {
      if (c == "memory") p.v1_memory = path;
    }
  }
  return p;
}

JobCgroup::JobCgroup(std::string dir, bool v2)
    : dir_(std::move(dir)), procs_path_(dir_ + "/cgroup.procs"), v2_(v2) {
  if (v2_) kill_fd_ = ::open((dir_ + "/cgroup.kill").c_str(), O_WRONLY | O_CLOEXEC);
}

JobCgroup::JobCgroup(JobCgroup&& o) noexcept
    : dir_(std::move(o.dir_)),
      procs_path_(std::move(o.procs_path_)),
      v2_(o.v2_),
      kill_fd_(o.kill_fd_) {
  o.kill_fd_ = -1;
  o.dir_.clear();
}

JobCgroup::~JobCgroup() {
  if (kill_fd_ >= 0) ::close(kill_fd_);
  if (!dir_.empty()) ::rmdir(dir_.c_str());  // fails harmlessly while processes remain
}

Result<JobCgroup> JobCgroup::Create(const SysRoot& root, const std::string& name) {
  auto mounts_text = root.ReadFile("proc/self/mounts");
  auto cgroup_text = root.ReadFile("proc/self/cgroup");
  if (!mounts_text || !cgroup_text)
    return Error{"no job cgroup: cannot read proc/self/mounts or proc/self/cgroup"};
  const CgroupMounts mounts = ParseCgroupMounts(*mounts_text);
  const CgroupPaths paths = ParseProcCgroup(*cgroup_text);
  std::string why;
  auto try_make = [&](const std::string& mount, const std::optional<std::string>& own, bool v2,
                      const char* what) -> std::optional<JobCgroup> {
    if (mount.empty() || !own) {
      why += fmt::format("{}{}: not mounted", why.empty() ? "" : "; ", what);
      return std::nullopt;
    }
    const std::string base = fmt::format("{}{}/{}", mount, *own == "/" ? "" : *own, name);
    const auto dir = MakeOwnDir(base);
    if (!dir) {
      why += fmt::format("{}{}: mkdir({}): {}", why.empty() ? "" : "; ", what, base,
                         std::strerror(errno));
      return std::nullopt;
    }
    JobCgroup cg(*dir, v2);
    if (v2 && cg.kill_fd_ < 0) {
      why +=
          fmt::format("{}{}: no cgroup.kill (kernel before 5.14)", why.empty() ? "" : "; ", what);
      return std::nullopt;  // the destructor removes the directory
    }
    return cg;
  };
  if (auto cg = try_make(mounts.v2, paths.v2, true, "cgroup v2")) return std::move(*cg);
  if (auto cg = try_make(mounts.v1_memory, paths.v1_memory, false, "cgroup v1 memory")) {
    return std::move(*cg);
  }
  return Error{"no job cgroup: " + why};
}

std::vector<pid_t> JobCgroup::Pids() const {
  std::vector<pid_t> out;
  auto text = ReadSmall(procs_path_);
  if (!text) return out;
  std::istringstream in(*text);
  pid_t pid = 0;
  while (in >> pid) out.push_back(pid);
  return out;
}

bool JobCgroup::KillAll(const SysRoot& root) const {
  if (v2_ && kill_fd_ >= 0) return ::pwrite(kill_fd_, "1", 1, 0) == 1;
  bool any = false;
  for (pid_t pid : Pids()) {
    const auto stat = ReadProcStat(root, pid);
    if (!stat) continue;
    if (auto fd = OpenVerifiedPidfd(root, pid, stat->starttime_ticks)) {
      any |= PidfdSendSignal(*fd, SIGKILL) == 0;
      ::close(*fd);
    }
  }
  return any;
}

std::optional<uint64_t> JobCgroup::PeakBytes() const {
  auto text = ReadSmall(dir_ + (v2_ ? "/memory.peak" : "/memory.max_usage_in_bytes"));
  if (!text) return std::nullopt;
  try {
    return std::stoull(*text);
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace headroom
