// `headroom ladder` without a subcommand: every open ladder, where it stands, what was done
// and the evidence, as text or JSON (docs/ladder.md).
#pragma once

#include "cli/cli.h"
#include "store/journal.h"
#include "sys/sysroot.h"

namespace headroom {

// `journal` null: none exists yet (no ladders). Exit status 0, or 1 when it cannot be read.
int ShowLadders(const CliEnv& env, Journal* journal, const SysRoot& root, bool json);

}  // namespace headroom
