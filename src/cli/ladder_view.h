// `headroom ladder` on the terminal (docs/ladder.md): without a subcommand every open
// ladder, where it stands, what was done and the evidence, as text or JSON; after start,
// record, next and apply, where the ladder is now, in the user's language.
#pragma once

#include <cstdio>
#include <optional>
#include <string>

#include "cli/cli.h"
#include "ladder/ladder_steps.h"
#include "store/journal.h"
#include "sys/sysroot.h"

namespace headroom {

// `journal` null: none exists yet (no ladders). Exit status 0, or 1 when it cannot be read.
int ShowLadders(const CliEnv& env, Journal* journal, const SysRoot& root, bool json);

// "ladder N for job 'JOB' (OOM at S): step 1 of 4: TITLE" and step 1's advice.
void PrintLadderStarted(std::FILE* out, const LadderRow& row, const LadderStarted& started);
// After `record`: solved, exhausted, or the next step and its advice.
void PrintLadderRecorded(std::FILE* out, const std::string& job, const LadderMoved& moved);
// After `next`: the step skipped, the next step and its advice.
void PrintLadderSkipped(std::FILE* out, const std::string& job, const LadderMoved& moved);
// `apply`'s confirmation (FlushRequest::confirm): nullopt to go on with --yes or a yes typed
// on the terminal; else why not (stdin is no terminal, or the answer was not y, Y or yes).
std::optional<Message> ConfirmFlush(const CliEnv& env, const SysRoot& root, bool yes);
// After `apply`: what the flush did, and what to run next.
void PrintLadderFlushed(std::FILE* out, const std::string& job, const LadderFlushed& done);

}  // namespace headroom
