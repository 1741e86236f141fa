// Processes: /proc/PID/stat and /proc/PID/status, parsed apart from reading (docs/style.md
// rule 2), and the descendants of a process found by walking parent links.
//
// The comm field of /proc/PID/stat is in parentheses and may itself hold ')' , spaces or
// newlines (a process can name itself anything), so the parser finds the LAST ')' and reads
// the fixed fields after it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "sys/sysroot.h"

namespace headroom {

struct ProcStat {
  pid_t pid = 0;
  std::string comm;
  char state = '?';
  pid_t ppid = 0;
  pid_t pgrp = 0;
  pid_t session = 0;
  uint64_t flags = 0;            // field 9: the kernel's PF_* bits (docs/sources.md section 9)
  uint64_t starttime_ticks = 0;  // field 22: clock ticks after boot; with pid, an identity
  uint64_t rss_pages = 0;        // field 24
};

// Parses the text of /proc/PID/stat; nullopt when it is not one.
std::optional<ProcStat> ParseProcStat(std::string_view text);

// Reads proc/PID/stat below the root; nullopt when the process is gone or unreadable.
std::optional<ProcStat> ReadProcStat(const SysRoot& root, pid_t pid);

// Every numeric entry of proc/.
std::vector<pid_t> ListPids(const SysRoot& root);

// All live descendants of `ancestor` (not itself), from one scan of proc/. Zombies are
// included (they still hold their pid until reaped).
std::vector<ProcStat> Descendants(const SysRoot& root, pid_t ancestor);

// The same through proc/PID/task/TID/children (CONFIG_PROC_CHILDREN): reads only the
// tree's own files, so its cost follows the tree's size, not the machine's process count.
// nullopt when the kernel has no children files (then use Descendants).
std::optional<std::vector<ProcStat>> DescendantsByChildLinks(const SysRoot& root, pid_t ancestor);

// VmRSS from the text of /proc/PID/status, in bytes.
std::optional<uint64_t> ParseStatusRssBytes(std::string_view status_text);

}  // namespace headroom
