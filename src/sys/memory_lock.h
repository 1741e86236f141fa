// Locking a watcher's own pages in memory: `headroom guard` and `headroom guardian` act under
// the memory pressure that would reclaim them, and a page fault then makes the next reading
// late (docs/guard.md "Self-protection"). Only the pages the process touches are locked
// (MCL_ONFAULT where the kernel has it, 4.4 and later), so the resident size does not grow to
// the whole mapped binary.
#pragma once

#include <optional>

namespace headroom {

// mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT); the errno when it failed (no
// CAP_IPC_LOCK and RLIMIT_MEMLOCK too small), nullopt when the pages are locked.
std::optional<int> LockOwnPagesOnFault();

}  // namespace headroom
