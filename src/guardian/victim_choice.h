// Which job `headroom guardian` ends when the pool runs out, as a pure function of a table
// of processes (docs/guardian.md "Choosing the victim"): the processes are grouped into jobs
// (a service's, a container's or a job's own cgroup, else a process tree cut at a shell, a
// never-ended process or the scope's edge), each job's memory summed (RSS + swap + GPU +
// memfds + shared memory, each term in bytes), and the jobs ranked: --prefer first, the most
// memory held, --protect only when nothing else holds memory; a job under a live `headroom
// guard` is left to that guard. The choice comes with one line that says who, why and who
// else was considered.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/message.h"
#include "base/result.h"
#include "guardian/process_memory.h"

namespace headroom {

// A job below this holds too little to be worth ending: ending it would not give the pool
// back (a shell, a `sleep`, an idle agent hold 1-10 MiB).
inline constexpr uint64_t kMeaningfulHeldBytes = 16ULL << 20;

// --only: a process tree ("4242"), a cgroup ("/user.slice/..." with its sub-cgroups) or a
// name pattern (anything else: a shell glob, see MatchesPattern).
struct Scope {
  enum class Kind { kTree, kCgroup, kName };
  Kind kind = Kind::kName;
  pid_t pid = 0;     // kTree
  std::string text;  // kCgroup: the path; kName: the pattern
};
Result<Scope> ParseScope(std::string_view text);

// A shell glob (fnmatch) against the process name, argv[0]'s last component, the command
// line (argv joined by blanks) or the cgroup path.
bool MatchesPattern(const ProcessMemory& p, std::string_view pattern);

// Never a victim: PID 1, kernel threads, sshd, systemd and its own services, the display
// server, the login session's manager, D-Bus, headroom itself (a guard is the job's guardian).
bool NeverEnded(const ProcessMemory& p);

struct ChoiceOptions {
  pid_t self = 0;           // the guardian: never a victim, nor anything above it
  std::vector<Scope> only;  // empty: every process
  std::vector<std::string> protect;
  std::vector<std::string> prefer;
  // Live guards (`headroom guard`, `watch --guard`, `sweep`) that are not silent: a job
  // below one of them is left to it.
  std::set<pid_t> guard_pids;
};

// The candidates of the scope: the pids of `table` that --only admits (all when it is
// empty), minus the never-ended ones and the guardian itself.
std::set<pid_t> CandidatePids(const std::vector<ProcessMemory>& table, const ChoiceOptions& o);

struct Job {
  pid_t root = 0;                         // the topmost process of the job
  std::string cgroup;                     // set when the job is a service's or container's cgroup
  std::vector<pid_t> pids;                // every member, root first
  std::map<pid_t, uint64_t> start_ticks;  // each member's identity with its pid
  std::string name;                       // the root's name
  uint64_t rss_bytes = 0;  // VmRSS less its shared part (counted under shmem or memfd)
  uint64_t swap_bytes = 0;
  uint64_t gpu_bytes = 0;
  uint64_t memfd_bytes = 0;  // each memfd once
  uint64_t shmem_bytes = 0;
  bool preferred = false;
  bool is_protected = false;
  bool guarded = false;  // below a live guard: left to it
  uint64_t HeldBytes() const;
};

// The jobs of the candidates (terms read into the table already).
std::vector<Job> GroupJobs(const std::vector<ProcessMemory>& table, const std::set<pid_t>& cands,
                           const ChoiceOptions& o);

struct VictimChoice {
  std::optional<Job> victim;
  std::vector<Job> considered;  // every job, the victim first, in rank order
  Message line;                 // who, why (each term in bytes), who else was considered
};

VictimChoice ChooseVictim(std::vector<Job> jobs);

}  // namespace headroom
