// JobCgroup: a cgroup of the job's own, so the kill reaches every process the job made,
// however it detached, and the cgroup's peak memory can be reported.
//
// cgroup v2 is preferred (cgroup.kill kills the whole group atomically, Linux 5.14+); on a
// host whose memory controller is bound to cgroup v1 the v1 memory hierarchy is used and
// the kill loops over cgroup.procs until it is empty. Where no cgroup can be made (no
// permission, no delegation) Create returns an error that the guard reports as a note and
// carries on with its process-tree kill.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "sys/sysroot.h"

namespace headroom {

// Parsers for the two files that locate our own cgroup (pure, for fixture tests).
struct CgroupMounts {
  std::string v2;         // mount point of the cgroup2 hierarchy, "" if none
  std::string v1_memory;  // mount point of the v1 hierarchy with the memory controller
};
CgroupMounts ParseCgroupMounts(std::string_view proc_mounts);
struct CgroupPaths {
  std::optional<std::string> v2;         // "0::/path"
  std::optional<std::string> v1_memory;  // "N:...memory...:/path"
};
CgroupPaths ParseProcCgroup(std::string_view proc_self_cgroup);

class JobCgroup {
 public:
  // Makes <our cgroup>/<name> in v2, else in the v1 memory hierarchy. Never adopts a
  // leftover directory of that name: an empty one is removed and made afresh, one that still
  // holds processes (an orphaned job, which a cgroup.kill would reach) is left alone and the
  // cgroup is <name>-1, -2 ... instead.
  static Result<JobCgroup> Create(const SysRoot& root, const std::string& name);
  JobCgroup(JobCgroup&& other) noexcept;
  JobCgroup& operator=(JobCgroup&&) = delete;
  JobCgroup(const JobCgroup&) = delete;
  ~JobCgroup();  // removes the directory once it is empty

  // The cgroup.procs file a forked child writes "0" into before exec.
  const std::string& procs_path() const { return procs_path_; }
  const std::string& dir() const { return dir_; }
  bool is_v2() const { return v2_; }

  std::vector<pid_t> Pids() const;
  bool Empty() const { return Pids().empty(); }
  // v2: writes 1 to cgroup.kill (a pre-opened fd). v1: SIGKILL to every pid listed, through
  // verified pidfds. Returns false when the cgroup could not be told.
  bool KillAll(const SysRoot& root) const;
  // Peak memory charged to the cgroup (v2 memory.peak, v1 memory.max_usage_in_bytes).
  std::optional<uint64_t> PeakBytes() const;

 private:
  JobCgroup(std::string dir, bool v2);
  std::string dir_;
  std::string procs_path_;
  bool v2_ = false;
  int kill_fd_ = -1;
};

}  // namespace headroom
