// Step 1 of the OOM ladder, the page-cache flush: which processes of the job are alive
// (a flush while the job runs would only slow it: its own file pages are read back), and
// the flush itself (sync, then "3" to proc/sys/vm/drop_caches below a SysRoot, so tests
// write to a fixture tree).
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "sys/process_survey.h"  // ParseCmdline
#include "sys/sysroot.h"

namespace headroom {

struct JobProcess {
  pid_t pid = 0;
  std::string cmdline;  // arguments joined by spaces
};

// True when `argv` belongs to the job: its arguments, joined by spaces, contain `match`.
// `headroom ladder ...` invocations name the job too but are not it, so they never match.
bool CmdlineMatchesJob(const std::vector<std::string>& argv, std::string_view match);

// Processes below `root` whose cmdline matches, except `self` (headroom itself). Processes
// that vanish or cannot be read during the scan are skipped.
std::vector<JobProcess> FindJobProcesses(const SysRoot& root, std::string_view match, pid_t self);

// The file a flush writes, below the root.
inline constexpr std::string_view kDropCachesPath = "proc/sys/vm/drop_caches";

// sync(), then writes "3" (page cache plus dentries and inodes) to drop_caches below
// `root`. Needs root on a real system; the error names the file and errno.
Result<bool> DropPageCache(const SysRoot& root);

}  // namespace headroom
