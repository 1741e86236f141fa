// Process facts for `headroom ps`: the command line, the environment, the proportional set
// size, whether torch is mapped, the owner and the cgroup of one process, each parsed apart
// from reading (docs/style.md rule 2) so tests feed literal /proc text.
//
// Every file here may be unreadable for another user's process (environ, smaps_rollup and
// maps need ptrace-read access) or vanish mid-read (the process exited): readers return
// nullopt then, never an error, because a survey of the machine goes on past any one pid.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sys/sysroot.h"

namespace headroom {

// The arguments of /proc/PID/cmdline: NUL-separated, with a final NUL that is not an empty
// last argument. Text with no NUL at all (a process that rewrote its argv area with
// setproctitle) is one argument. Empty text (a kernel thread, a zombie) is no argument.
std::vector<std::string> ParseCmdline(std::string_view text);

// NAME=value entries of /proc/PID/environ (NUL-separated). Entries without '=' or with an
// empty name are skipped; for a repeated name the first wins, as getenv(3) does.
std::map<std::string, std::string> ParseEnviron(std::string_view text);

// The "Pss:" line of /proc/PID/smaps_rollup (kB, i.e. KiB), in bytes. Found by key, not by
// line order; nullopt when absent or malformed.
std::optional<uint64_t> ParseSmapsRollupPssBytes(std::string_view text);

// Whether /proc/PID/maps maps a libtorch shared object (libtorch.so, libtorch_cpu.so,
// libtorch_cuda.so, ...): what `import torch` leaves in a process, whatever its name.
bool MapsHasTorch(std::string_view maps_text);

// The real uid from the "Uid:" line of /proc/PID/status.
std::optional<uid_t> ParseStatusUid(std::string_view status_text);

// uid -> name from the text of /etc/passwd (name:x:uid:...); malformed lines are skipped.
std::map<uid_t, std::string> ParsePasswdNames(std::string_view text);

// The unified (cgroup v2, "0::") path from /proc/PID/cgroup: "/system.slice/ollama.service".
std::optional<std::string> ParseCgroupV2Path(std::string_view text);

// A file read up to `max_bytes`; `truncated` says the file went on. Reading a prefix
// (rather than failing) keeps a process with a 2 MB command line in the survey.
struct FilePrefix {
  std::string text;
  bool truncated = false;
};
std::optional<FilePrefix> ReadFilePrefix(const SysRoot& root, std::string_view relative,
                                         size_t max_bytes);

// What the survey knows about one process. Absent files leave their field empty.
struct ProcessFacts {
  pid_t pid = 0;
  pid_t ppid = 0;
  std::string comm;  // from stat; shown when cmdline is empty
  std::vector<std::string> argv;
  bool argv_truncated = false;
  std::optional<uid_t> uid;
  std::optional<uint64_t> rss_bytes;  // VmRSS of status
  std::optional<uint64_t> pss_bytes;  // smaps_rollup (kernel 4.14+), when readable
  std::optional<std::map<std::string, std::string>> environ;  // nullopt: unreadable
  std::optional<std::string> cgroup;                          // cgroup v2 path
};

// Reads the cheap facts: stat, cmdline. Nullopt when the process is gone.
std::optional<ProcessFacts> ReadProcessBasics(const SysRoot& root, pid_t pid);

// Adds status (uid, RSS), smaps_rollup (PSS), environ and cgroup to `facts`.
void ReadProcessDetails(const SysRoot& root, ProcessFacts& facts);

// Reads proc/PID/maps and looks for libtorch; false when unreadable.
bool ReadMapsHasTorch(const SysRoot& root, pid_t pid);

}  // namespace headroom
