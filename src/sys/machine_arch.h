// The CPU architecture of the machine below a SysRoot.
#pragma once

#include <string>

#include "sys/sysroot.h"

namespace headroom {

// proc/sys/kernel/arch below the root (Linux 6.1+, and fixture trees), else uname's machine;
// "" when neither answers.
std::string MachineArch(const SysRoot& root);

}  // namespace headroom
