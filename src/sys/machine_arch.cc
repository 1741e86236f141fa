#include "sys/machine_arch.h"

#include <sys/utsname.h>

#include "base/text.h"

namespace headroom {

std::string MachineArch(const SysRoot& root) {
  if (auto a = root.ReadFile("proc/sys/kernel/arch", 256)) {
    const std::string_view t = TrimBlanks(*a);
    if (!t.empty()) return std::string(t);
  }
  utsname u{};
  if (::uname(&u) == 0) return u.machine;
  return "";
}

}  // namespace headroom
