// How `headroom guard` and `headroom sweep` show the guard's results on the terminal, in
// the user's language: the closing summary line and the list of the pool's usual holders.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string_view>
#include <vector>

#include "guard/guard.h"

namespace headroom {

// "headroom guard: <how it ended> after N s; lowest MemAvailable ...", one line, then
// "headroom guard: note: ..." for each of the summary's notes.
void PrintGuardSummary(std::FILE* out, const GuardSummary& summary);

// After a kill for memory: the job's own peak where one is known and the next step, one line
// each after `prefix` ("headroom guard: "); nothing when the guard did not kill.
void PrintKillFollowUp(std::FILE* out, std::string_view prefix, const GuardSummary& summary);

// The refusal of --require-available: MemAvailable `available_bytes` below `need_bytes`,
// then the usual holders of the pool (or that none were found); nothing is signalled.
void PrintGuardRefusal(std::FILE* out, uint64_t available_bytes, uint64_t need_bytes,
                       const std::vector<Leftover>& leftovers);

// One line per leftover ("  pid N  what  RSS x GiB  cmdline").
void PrintLeftovers(std::FILE* out, const std::vector<Leftover>& leftovers);

}  // namespace headroom
