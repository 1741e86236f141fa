#include "doctor/memory_guards.h"

#include <algorithm>
#include <array>

#include "sys/process_survey.h"
#include "sys/processes.h"

namespace headroom {
namespace {

constexpr std::array<std::string_view, 5> kGuardOrder = {"earlyoom", "systemd-oomd", "oomd",
                                                         "nohang", "headroom guardian"};

std::string_view BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::optional<std::string> MemoryGuardOf(std::string_view comm,
                                         const std::vector<std::string>& argv) {
  if (comm == "earlyoom" || comm == "systemd-oomd" || comm == "nohang") return std::string(comm);
  if (comm == "oomd" || comm == "oomd_bin") return std::string("oomd");
  // nohang is a Python script: its name is the interpreter's.
  for (size_t i = 0; i < argv.size() && i < 2; ++i) {
    if (BaseName(argv[i]) == "nohang") return std::string("nohang");
  }
  if (comm == "headroom" && argv.size() >= 2 && argv[1] == "guardian") {
    return std::string("headroom guardian");
  }
  // The lean worker that `headroom guardian` execs (its name cut to comm's 15 bytes).
  if (comm == "headroom-guardi" || (!argv.empty() && BaseName(argv[0]) == "headroom-guardian")) {
    return std::string("headroom guardian");
  }
  return std::nullopt;
}

std::vector<std::string> FindMemoryGuards(const SysRoot& root) {
  std::vector<std::string> found;
  for (const pid_t pid : ListPids(root)) {
    const auto stat = ReadProcStat(root, pid);
    if (!stat) continue;
    std::vector<std::string> argv;
    if (auto cmd = ReadFilePrefix(root, "proc/" + std::to_string(pid) + "/cmdline", 4096)) {
      argv = ParseCmdline(cmd->text);
    }
    if (auto guard = MemoryGuardOf(stat->comm, argv);
        guard && std::find(found.begin(), found.end(), *guard) == found.end()) {
      found.push_back(*guard);
    }
  }
  std::sort(found.begin(), found.end(), [](const std::string& a, const std::string& b) {
    return std::find(kGuardOrder.begin(), kGuardOrder.end(), a) <
           std::find(kGuardOrder.begin(), kGuardOrder.end(), b);
  });
  return found;
}

}  // namespace headroom
