// `headroom history` on the terminal, in the user's language: the journal's runs as a
// table, each run's recorded notes under its line (store/run_history.h has the data and
// its JSON).
#pragma once

#include <filesystem>
#include <vector>

#include "cli/cli.h"
#include "store/journal.h"

namespace headroom {

// "journal: PATH", then the table (ID, KIND, STARTED (UTC), DURATION, STATUS, EXIT,
// COMMAND) with the notes; "no runs recorded in PATH" when there are none.
void PrintRunHistory(const CliEnv& env, const std::filesystem::path& path,
                     const std::vector<RunRow>& runs);

}  // namespace headroom
