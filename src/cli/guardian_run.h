// The guardian's run (docs/guardian.md): the real readers (guardian/guardian_sources.h), the
// loop (guardian/guardian_loop.h) between waits for SIGTERM, SIGINT (stop) or SIGHUP (levels
// read again), each event printed, recorded and handed to --on-event. Run by the lean
// worker `headroom-guardian` (src/guardian_main.cc) that `headroom guardian` execs, and by
// `headroom guardian` itself when no worker is installed beside it.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

#include "guardian/worker_args.h"
#include "sys/sysroot.h"

namespace headroom {

struct GuardianRunIo {
  std::FILE* out = stdout;
  std::FILE* err = stderr;
  // SIGHUP: the levels read again into `levels`; false and `why` when they are kept.
  std::function<bool(ReloadedLevels& levels, std::string& why)> reload;
};

// Runs until SIGTERM or SIGINT: 0 then; 1 when MemAvailable cannot be read; 2 when the events
// file cannot be opened.
int RunGuardian(const SysRoot& root, const GuardianRunSettings& settings, const GuardianRunIo& io);

}  // namespace headroom
