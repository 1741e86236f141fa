#include "guardian/guardian_sources.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <string>

#include "gpu/nvml.h"
#include "guard/guard_record.h"
#include "ladder/flush.h"
#include "pool/pool_survey.h"
#include "sys/meminfo.h"
#include "top/running_guards.h"

namespace headroom {

double GuardianMonotonicNow() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int WaitForGuardianSignal(const sigset_t& set, std::chrono::milliseconds period) {
  timespec ts{static_cast<time_t>(period.count() / 1000),
              static_cast<long>(period.count() % 1000) * 1'000'000L};
  const int sig = ::sigtimedwait(&set, nullptr, &ts);
  return sig > 0 ? sig : 0;
}

MemAvailableReader::MemAvailableReader(const SysRoot& root)
    : fd_(OpenKernelFile(root.Path("proc/meminfo"))) {}

MemAvailableReader::~MemAvailableReader() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<uint64_t> MemAvailableReader::Read() {
  if (fd_ < 0) return std::nullopt;
  char buffer[8192];
  const ssize_t n = ::pread(fd_, buffer, sizeof buffer, 0);
  if (n <= 0) return std::nullopt;
  return ParseMemAvailableFast(std::string_view(buffer, static_cast<size_t>(n)));
}

GpuProcessReader::GpuProcessReader(const std::optional<std::string>& library) {
  if (!library) return;
  auto nvml = Nvml::Open(*library);
  if (!nvml) {
    note_ = nvml.error().what;
    return;
  }
  backend_ = std::move(*nvml);
}

GpuProcessReader::~GpuProcessReader() = default;

std::map<pid_t, uint64_t> GpuProcessReader::Read() {
  std::map<pid_t, uint64_t> out;
  if (!backend_) return out;
  const GpuProcessList list = ReadGpuProcesses(*backend_);
  if (!list.processes) return out;
  for (const GpuProcess& p : *list.processes) {
    if (p.used_bytes) out[static_cast<pid_t>(p.pid)] += *p.used_bytes;
  }
  return out;
}

PsiFullTrigger::PsiFullTrigger(const SysRoot& root) {
  const std::string path = root.Path("proc/pressure/memory").string();
  for (const char* spec : {"full 500000 1000000", "full 1000000 2000000"}) {
    fd_ = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) return;
    if (::write(fd_, spec, std::char_traits<char>::length(spec) + 1) >= 0) return;
    ::close(fd_);
    fd_ = -1;
  }
}

PsiFullTrigger::~PsiFullTrigger() {
  if (fd_ >= 0) ::close(fd_);
}

bool PsiFullTrigger::Fired() {
  if (fd_ < 0) return false;
  pollfd p{fd_, POLLPRI, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & POLLPRI) != 0;
}

bool ReleaseDriverPools(const SysRoot& root) {
  const auto dropped = DropPageCache(root);
  return dropped && *dropped;
}

std::vector<LiveGuard> ReadLiveGuards(const std::filesystem::path& journal, const SysRoot& root) {
  RunningGuardReader reader(journal, root, LocalHostName());
  std::string note;
  std::vector<LiveGuard> out;
  for (const RunningGuard& g : reader.Read(note)) out.push_back({g.guard_pid, g.kill_below_bytes});
  return out;
}

}  // namespace headroom
