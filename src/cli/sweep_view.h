// How `headroom sweep` shows itself on the terminal, in the user's language: the preflight
// (the pool's usual holders, a refusal to start, the levels it runs at) and the results
// (the Markdown table, the answer, why it stopped, where the run and its logs are).
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "guard/guard.h"
#include "sweep/sweep.h"

namespace headroom {

// The holders of the pool found before the sweep, and, with --kill-leftovers, what was done
// to each (`signalled`: one line per process; empty when nothing was signalled).
void PrintSweepLeftovers(std::FILE* err, const std::vector<Leftover>& leftovers,
                         bool kill_leftovers, const std::vector<Message>& signalled);

// The refusal to start: MemAvailable `available_bytes` is below `need_bytes`.
void PrintSweepRefusal(std::FILE* err, const SweepOptions& options, uint64_t available_bytes,
                       uint64_t need_bytes, bool no_leftovers);

// "limit ... pool use (MemTotal ...), margin ..., guard kill level ..., journal PATH".
void PrintSweepStart(std::FILE* err, const SweepOptions& options, uint64_t mem_total_bytes,
                     const std::filesystem::path& journal);

// The table, its legend, the answer, the stop reasons and the run's place in the journal.
void PrintSweepResult(std::FILE* out, const SweepOptions& options, const SweepResult& result,
                      const std::filesystem::path& journal);

}  // namespace headroom
