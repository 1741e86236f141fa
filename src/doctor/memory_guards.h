// Which memory guards run on this machine, for `doctor` (docs/guardian.md "Switching from
// earlyoom"): earlyoom, systemd-oomd, oomd, nohang and `headroom guardian`, found by process
// name and command line. Two guards race for one victim; none lets a full pool freeze the
// machine.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sys/sysroot.h"

namespace headroom {

// The guard a process is ("earlyoom", "systemd-oomd", "oomd", "nohang", "headroom guardian"),
// from its name (comm) and argv; nullopt for anything else.
std::optional<std::string> MemoryGuardOf(std::string_view comm,
                                         const std::vector<std::string>& argv);

// The guards running below `root`, each once, in the order above.
std::vector<std::string> FindMemoryGuards(const SysRoot& root);

}  // namespace headroom
