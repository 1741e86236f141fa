// Implementation notes.
//  - status and smaps_rollup are parsed by key ("\nKEY:"), in kB (KiB), as the kernel writes
//    them (Documentation/filesystems/proc.rst in the kernel tree; docs/guardian.md cites it).
//  - A memfd's size is the st_size of stat(2) through the fd link: the link resolves to the
//    file itself even though its name is "(deleted)". The inode lets a job count a memfd held
//    by several of its processes (a fork inherits the descriptor) once.
//  - The fd directory is read with a cap: a process with a million descriptors must not make
//    the guardian slow while the pool is full.
#include "guardian/process_memory.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>

#include "sys/process_survey.h"
#include "sys/processes.h"

namespace headroom {
namespace {

constexpr int kMaxFdsLooked = 4096;
constexpr size_t kGuardianCmdlineMaxBytes = 4096;
// A term past 1 PiB is no machine's: garbage (a file torn mid-read, a fixture), read as
// unreadable so it neither wins the choice nor overflows a job's sum.
constexpr uint64_t kMaxTermKib = 1ULL << 40;
constexpr uint64_t kPfKthread = 0x00200000;  // PF_KTHREAD (docs/sources.md section 9)

std::string GuardianProcFile(pid_t pid, std::string_view name) {
  return "proc/" + std::to_string(pid) + "/" + std::string(name);
}

// The value of "\nKEY:   1234 kB" in bytes.
std::optional<uint64_t> KibLine(std::string_view text, std::string_view key) {
  const std::string head = std::string(key) + ":";
  size_t at = 0;
  if (!text.starts_with(head)) {
    at = text.find("\n" + head);
    if (at == std::string_view::npos) return std::nullopt;
    ++at;
  }
  size_t i = at + head.size();
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  size_t j = i;
  while (j < text.size() && text[j] >= '0' && text[j] <= '9') ++j;
  uint64_t kib = 0;
  const auto [end, ec] = std::from_chars(text.data() + i, text.data() + j, kib);
  if (ec != std::errc() || j == i || kib > kMaxTermKib) return std::nullopt;
  return kib << 10;
}

}  // namespace

StatusMemory ParseStatusMemory(std::string_view text) {
  StatusMemory m;
  m.rss_bytes = KibLine(text, "VmRSS");
  m.rss_shmem_bytes = KibLine(text, "RssShmem");
  m.swap_bytes = KibLine(text, "VmSwap");
  return m;
}

std::optional<uint64_t> ParseSmapsRollupShmemBytes(std::string_view text) {
  return KibLine(text, "Pss_Shmem");
}

bool IsMemfdTarget(std::string_view target) {
  const size_t slash = target.rfind('/');
  const std::string_view last = slash == std::string_view::npos ? target : target.substr(slash + 1);
  return last.starts_with("memfd:");
}

std::vector<MemfdHeld> ReadMemfds(const SysRoot& root, pid_t pid) {
  std::vector<MemfdHeld> out;
  const std::string dir = root.Path(GuardianProcFile(pid, "fd")).string();
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  int looked = 0;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    if (++looked > kMaxFdsLooked) break;
    const std::string link = dir + "/" + e->d_name;
    char target[512];
    const ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
    if (n <= 0 || !IsMemfdTarget(std::string_view(target, static_cast<size_t>(n)))) continue;
    struct stat st {};
    if (::stat(link.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    out.push_back({static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_size)});
  }
  ::closedir(d);
  return out;
}

std::optional<ProcessMemory> ReadProcessMemoryBasics(const SysRoot& root, pid_t pid) {
  const auto stat = ReadProcStat(root, pid);
  if (!stat) return std::nullopt;
  ProcessMemory p;
  p.pid = pid;
  p.ppid = stat->ppid;
  p.session = stat->session;
  p.state = stat->state;
  p.start_ticks = stat->starttime_ticks;
  p.comm = stat->comm;
  if (auto cmd = ReadFilePrefix(root, GuardianProcFile(pid, "cmdline"), kGuardianCmdlineMaxBytes)) {
    p.argv = ParseCmdline(cmd->text);
  }
  if (auto cg = root.ReadFile(GuardianProcFile(pid, "cgroup"), 64 * 1024)) {
    p.cgroup = ParseCgroupV2Path(*cg).value_or("");
  }
  // The kernel's own mark (PF_KTHREAD in stat's flags), not "PID 2 and its children": in a
  // PID namespace (a container) PID 2 is an ordinary process and kthreadd is not seen.
  p.kernel_thread = (stat->flags & kPfKthread) != 0;
  return p;
}

void ReadProcessTerms(const SysRoot& root, const std::map<pid_t, uint64_t>& gpu_bytes_by_pid,
                      ProcessMemory& p) {
  if (auto status = root.ReadFile(GuardianProcFile(p.pid, "status"), 64 * 1024)) {
    const StatusMemory m = ParseStatusMemory(*status);
    p.rss_bytes = m.rss_bytes.value_or(0);
    p.rss_shmem_bytes = m.rss_shmem_bytes.value_or(0);
    p.swap_bytes = m.swap_bytes.value_or(0);
    p.uid = ParseStatusUid(*status);
    if (!m.rss_bytes && p.argv.empty() && p.state != 'Z') p.kernel_thread = true;
  }
  if (auto rollup = root.ReadFile(GuardianProcFile(p.pid, "smaps_rollup"), 64 * 1024)) {
    p.shmem_bytes = ParseSmapsRollupShmemBytes(*rollup).value_or(0);
  }
  if (const auto it = gpu_bytes_by_pid.find(p.pid); it != gpu_bytes_by_pid.end()) {
    p.gpu_bytes = it->second;
  }
  p.memfds = ReadMemfds(root, p.pid);
}

std::vector<ProcessMemory> ReadProcessTable(const SysRoot& root) {
  std::vector<ProcessMemory> out;
  for (const pid_t pid : ListPids(root)) {
    if (auto p = ReadProcessMemoryBasics(root, pid)) out.push_back(std::move(*p));
  }
  return out;
}

}  // namespace headroom
