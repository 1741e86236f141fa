// Implementation notes.
//  - A job is what ending one process should end with it: a service's, a container's or
//    another cgroup of the job's own whole (systemd stops them so too; a worker that
//    double-forked and called setsid left the tree but not the cgroup; a cgroup that holds a
//    shell is a terminal's, shared), else the process tree above and below the
//    process, walked up while the parent is a candidate and not a shell (a terminal's shell
//    is the user's, not the job's; killing it would end their session). A worker that left
//    its process group or session (setsid) is still a child of its parent, so the tree has
//    it: torchrun's ranks, a vLLM server's engine core, a notebook's kernels.
//  - The held total counts shared memory once: VmRSS includes the shared pages a process
//    maps (RssShmem), which are also its Pss_Shmem or one of its memfds, so RSS less that
//    part is added to the larger of the memfds' sizes and the mapped shared memory. A memfd
//    no process maps (the stand-in for CUDA memory on GB10, docs/guardian.md) shows only as
//    its size; one that is mapped shows in both and is counted once.
//  - The rank (earlyoom's is the largest oom_score, main.c kill_largest_process; the kernel's
//    oom_badness is RSS + swap + page tables): --prefer first, then the most held, --protect
//    last and only when no other job holds kMeaningfulHeldBytes.
#include "guardian/victim_choice.h"

#include <fnmatch.h>

#include <algorithm>
#include <array>
#include <map>

#include "base/text.h"

namespace headroom {
namespace {

// Process names (comm, 15 bytes at most) never ended: the machine's own and the session's.
constexpr std::array<std::string_view, 30> kNeverNames = {"systemd",
                                                          "init",
                                                          "sshd",
                                                          "sshd-session",
                                                          "systemd-logind",
                                                          "login",
                                                          "agetty",
                                                          "gdm",
                                                          "gdm3",
                                                          "gdm-session-wor",
                                                          "gdm-wayland-ses",
                                                          "gdm-x-session",
                                                          "sddm",
                                                          "lightdm",
                                                          "Xorg",
                                                          "Xwayland",
                                                          "X",
                                                          "gnome-shell",
                                                          "kwin_wayland",
                                                          "kwin_x11",
                                                          "weston",
                                                          "sway",
                                                          "mutter",
                                                          "dbus-daemon",
                                                          "dbus-broker",
                                                          "headroom",
                                                          "headroom-guardi",
                                                          "earlyoom",
                                                          "nvidia-persistenced",
                                                          "polkitd"};

// A process whose children are separate jobs: a shell, a terminal multiplexer, sudo.
constexpr std::array<std::string_view, 14> kShellNames = {
    "bash", "sh",   "dash",         "zsh",    "fish",   "ksh",  "tcsh",
    "csh",  "tmux", "tmux: server", "screen", "SCREEN", "sudo", "su"};

bool IsShell(const ProcessMemory& p) {
  return std::find(kShellNames.begin(), kShellNames.end(), p.comm) != kShellNames.end();
}

std::string_view LastComponent(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// A cgroup that is one service or one container: ended whole.
bool IsUnitCgroup(std::string_view cgroup) {
  const std::string_view last = LastComponent(cgroup);
  if (last.ends_with(".service")) return !last.starts_with("user@");
  if (last.ends_with(".scope")) {
    return last.starts_with("docker-") || last.starts_with("libpod-") ||
           last.starts_with("cri-containerd-") || last.starts_with("crio-");
  }
  return false;
}

// A cgroup that cannot be one job's: the root, a slice, init's, a login session's scope or a
// user's service manager, where every process of a login or a desktop lands.
bool IsSharedByName(std::string_view cgroup) {
  const std::string_view last = LastComponent(cgroup);
  return cgroup.empty() || cgroup == "/" || last.ends_with(".slice") || last == "init.scope" ||
         (last.starts_with("session-") && last.ends_with(".scope")) ||
         (last.starts_with("user@") && last.ends_with(".service"));
}

// The cgroups that are a job's own: a service's or a container's, or any other cgroup that is
// not shared by name and holds no shell and nothing never ended (a terminal's or a
// multiplexer's scope holds the user's shells: its processes are separate jobs).
std::set<std::string> JobCgroups(const std::vector<ProcessMemory>& table) {
  std::set<std::string> own, shared;
  for (const auto& p : table) {
    if (IsUnitCgroup(p.cgroup)) {
      own.insert(p.cgroup);
    } else if (IsSharedByName(p.cgroup) || IsShell(p) || NeverEnded(p)) {
      shared.insert(p.cgroup);
    }
  }
  for (const auto& p : table) {
    if (shared.count(p.cgroup) == 0) own.insert(p.cgroup);
  }
  return own;
}

bool InScope(const ProcessMemory& p, const Scope& s,
             const std::map<pid_t, const ProcessMemory*>& by_pid) {
  switch (s.kind) {
    case Scope::Kind::kCgroup:
      return p.cgroup == s.text || p.cgroup.starts_with(s.text + "/");
    case Scope::Kind::kTree:
    case Scope::Kind::kName: {
      // The process or one of its ancestors (64 at most: a loop in a fixture ends).
      const ProcessMemory* at = &p;
      for (int depth = 0; at != nullptr && depth < 64; ++depth) {
        if (s.kind == Scope::Kind::kTree ? at->pid == s.pid : MatchesPattern(*at, s.text))
          return true;
        const auto it = by_pid.find(at->ppid);
        at = it == by_pid.end() || at->ppid == at->pid ? nullptr : it->second;
      }
      return false;
    }
  }
  return false;
}

// Whether `pid` or one of its ancestors is in `set`.
bool BelowAny(pid_t pid, const std::set<pid_t>& set,
              const std::map<pid_t, const ProcessMemory*>& by_pid) {
  for (int depth = 0; pid > 0 && depth < 64; ++depth) {
    if (set.count(pid) != 0) return true;
    const auto it = by_pid.find(pid);
    if (it == by_pid.end() || it->second->ppid == pid) return false;
    pid = it->second->ppid;
  }
  return false;
}

std::map<pid_t, const ProcessMemory*> ByPid(const std::vector<ProcessMemory>& table) {
  std::map<pid_t, const ProcessMemory*> by_pid;
  for (const auto& p : table) by_pid[p.pid] = &p;
  return by_pid;
}

bool MatchesAny(const ProcessMemory& p, const std::vector<std::string>& patterns) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& pat) { return MatchesPattern(p, pat); });
}

void AddTerms(Job& job, const ProcessMemory& p, std::set<uint64_t>& memfd_inodes) {
  job.rss_bytes += p.rss_bytes - std::min(p.rss_bytes, p.rss_shmem_bytes);
  job.swap_bytes += p.swap_bytes;
  job.gpu_bytes += p.gpu_bytes;
  job.shmem_bytes += p.shmem_bytes;
  for (const auto& m : p.memfds) {
    if (memfd_inodes.insert(m.inode).second) job.memfd_bytes += m.bytes;
  }
}

bool Eligible(const Job& j) { return !j.guarded && j.HeldBytes() >= kMeaningfulHeldBytes; }

int RankClass(const Job& j) {
  if (!Eligible(j)) return 3;
  if (j.is_protected) return 2;
  return j.preferred ? 0 : 1;
}

// "vllm pid 4242 held 1073741824 B", with the reason it was passed over.
std::string ConsideredText(const std::vector<Job>& jobs, size_t from) {
  constexpr size_t kShown = 8;
  std::string out;
  for (size_t i = from; i < jobs.size() && i < from + kShown; ++i) {
    const Job& j = jobs[i];
    if (!out.empty()) out += ", ";
    out += EscapeControls(j.name) + " pid " + std::to_string(j.root) + " held " +
           std::to_string(j.HeldBytes()) + " B";
    if (j.guarded)
      out += " (left to its guard)";
    else if (j.HeldBytes() < kMeaningfulHeldBytes)
      out += " (too small)";
    else if (j.is_protected)
      out += " (protected)";
    else if (j.preferred)
      out += " (preferred)";
  }
  if (jobs.size() > from + kShown) out += ", +" + std::to_string(jobs.size() - from - kShown);
  return out.empty() ? "none" : out;
}

}  // namespace

Result<Scope> ParseScope(std::string_view text) {
  if (text.empty()) return Error{Msg("empty scope")};
  Scope s;
  s.text = std::string(text);
  if (text.front() == '/') {
    s.kind = Scope::Kind::kCgroup;
    while (s.text.size() > 1 && s.text.back() == '/') s.text.pop_back();
    return s;
  }
  if (std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    long long pid = 0;
    for (char c : text) {
      pid = pid * 10 + (c - '0');
      if (pid > (1LL << 22)) return Error{Msg("'{}' is not a process id", std::string(text))};
    }
    if (pid < 2) return Error{Msg("'{}' is not a process id", std::string(text))};
    s.kind = Scope::Kind::kTree;
    s.pid = static_cast<pid_t>(pid);
    return s;
  }
  s.kind = Scope::Kind::kName;
  return s;
}

bool MatchesPattern(const ProcessMemory& p, std::string_view pattern) {
  const std::string pat(pattern);
  auto match = [&](std::string_view text) {
    return !text.empty() && ::fnmatch(pat.c_str(), std::string(text).c_str(), 0) == 0;
  };
  if (match(p.comm) || match(p.cgroup)) return true;
  if (p.argv.empty()) return false;
  std::string line;
  for (const auto& a : p.argv) line += (line.empty() ? "" : " ") + a;
  return match(LastComponent(p.argv.front())) || match(line);
}

bool NeverEnded(const ProcessMemory& p) {
  if (p.pid <= 1 || p.kernel_thread) return true;
  if (std::find(kNeverNames.begin(), kNeverNames.end(), p.comm) != kNeverNames.end()) return true;
  if (p.comm.starts_with("systemd-")) return true;
  const std::string_view unit = LastComponent(p.cgroup);
  return p.cgroup == "/init.scope" || unit.starts_with("systemd-") || unit == "ssh.service" ||
         unit == "sshd.service" || unit == "display-manager.service" || unit == "dbus.service" ||
         unit == "gdm.service" || unit.starts_with("user@");
}

std::set<pid_t> CandidatePids(const std::vector<ProcessMemory>& table, const ChoiceOptions& o) {
  const auto by_pid = ByPid(table);
  std::set<pid_t> above_self;  // the guardian and its ancestors
  for (pid_t at = o.self; at > 0 && above_self.size() < 64;) {
    above_self.insert(at);
    const auto it = by_pid.find(at);
    if (it == by_pid.end() || it->second->ppid == at) break;
    at = it->second->ppid;
  }
  std::set<pid_t> out;
  for (const auto& p : table) {
    if (NeverEnded(p) || above_self.count(p.pid) != 0 || p.state == 'Z') continue;
    if (!o.only.empty() && std::none_of(o.only.begin(), o.only.end(),
                                        [&](const Scope& s) { return InScope(p, s, by_pid); })) {
      continue;
    }
    out.insert(p.pid);
  }
  return out;
}

uint64_t Job::HeldBytes() const {
  return rss_bytes + swap_bytes + gpu_bytes + std::max(memfd_bytes, shmem_bytes);
}

std::vector<Job> GroupJobs(const std::vector<ProcessMemory>& table, const std::set<pid_t>& cands,
                           const ChoiceOptions& o) {
  const auto by_pid = ByPid(table);
  const std::set<std::string> job_cgroups = JobCgroups(table);
  std::map<std::string, Job> jobs;
  std::map<std::string, std::set<uint64_t>> inodes;
  for (const auto& p : table) {
    if (cands.count(p.pid) == 0) continue;
    std::string key;
    Job start;
    if (job_cgroups.count(p.cgroup) != 0) {
      key = "cgroup:" + p.cgroup;
      start.cgroup = p.cgroup;
    }
    pid_t root = p.pid;
    for (int depth = 0; depth < 64; ++depth) {
      const auto it = by_pid.find(by_pid.at(root)->ppid);
      if (it == by_pid.end() || cands.count(it->first) == 0 || IsShell(*it->second) ||
          it->first == root || (!start.cgroup.empty() && it->second->cgroup != start.cgroup)) {
        break;
      }
      root = it->first;
    }
    if (key.empty()) key = "tree:" + std::to_string(root);
    auto [at, fresh] = jobs.try_emplace(key, start);
    Job& job = at->second;
    // A cgroup's job can have several roots (a worker that double-forked away from its
    // parent): the job is named after the one that started first.
    if (fresh || (root == p.pid && p.start_ticks < by_pid.at(job.root)->start_ticks)) {
      job.root = root;
      job.name = by_pid.at(root)->comm;
    }
    job.pids.push_back(p.pid);
    job.start_ticks[p.pid] = p.start_ticks;
    AddTerms(job, p, inodes[key]);
    job.preferred = job.preferred || MatchesAny(p, o.prefer);
    job.is_protected = job.is_protected || MatchesAny(p, o.protect);
    job.guarded = job.guarded || BelowAny(p.pid, o.guard_pids, by_pid);
  }
  std::vector<Job> out;
  for (auto& [key, job] : jobs) {
    // The root first, then by pid.
    const pid_t root = job.root;  // clang 14 captures no structured binding
    std::stable_partition(job.pids.begin(), job.pids.end(),
                          [root](pid_t pid) { return pid == root; });
    out.push_back(std::move(job));
  }
  return out;
}

VictimChoice ChooseVictim(std::vector<Job> jobs) {
  std::stable_sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) {
    const int ra = RankClass(a), rb = RankClass(b);
    if (ra != rb) return ra < rb;
    return a.HeldBytes() > b.HeldBytes();
  });
  VictimChoice c;
  if (!jobs.empty() && Eligible(jobs.front())) c.victim = jobs.front();
  if (!c.victim) {
    c.line = Msg("no victim: no job in scope holds {} B or more; considered: {}",
                 kMeaningfulHeldBytes, ConsideredText(jobs, 0));
  } else {
    const Job& v = *c.victim;
    const Message why = v.is_protected ? Msg("protected, but nothing else holds memory")
                        : v.preferred  ? Msg("preferred")
                                       : Msg("the most memory held");
    c.line = Msg(
        "victim {} (pid {}, {} processes): {}; held {} B = rss {} + swap {} + gpu {} + larger of "
        "memfd {} and shmem {}; considered: {}",
        v.name, static_cast<int64_t>(v.root), static_cast<uint64_t>(v.pids.size()), why,
        v.HeldBytes(), v.rss_bytes, v.swap_bytes, v.gpu_bytes, v.memfd_bytes, v.shmem_bytes,
        ConsideredText(jobs, 1));
  }
  c.considered = std::move(jobs);
  return c;
}

}  // namespace headroom
