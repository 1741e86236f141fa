// SIGHUP in the lean guardian worker (guardian/worker_args.h): the levels read again by
// running `program args... --print-levels` (headroom guardian with the user's flags, which
// reads a fresh config.toml), its stdout and stderr in one pipe, bounded in time and size.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/result.h"
#include "guardian/worker_args.h"

namespace headroom {

// The levels the program printed; an Error with its own error line (without "headroom: ")
// when it refused them, or saying it did not answer within `limit` (it is then killed).
Result<ReloadedLevels> ReadReloadedLevels(const std::string& program,
                                          const std::vector<std::string>& args,
                                          std::chrono::milliseconds limit);

}  // namespace headroom
