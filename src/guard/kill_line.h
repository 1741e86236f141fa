// What the guard says when it kills (docs/guard.md "The kill line"): the reading and the level
// it crossed (or the projection, or the pressure), the job's own peak where one is known, and
// the next step. The terminal line (cli/guard_view.cc), the events file's "exit" line and the
// summary's "kill" object (GuardSummaryJson) hold the same facts.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/message.h"

namespace headroom {

struct GuardSummary;

// The job's own peak, never the machine's pool use: the largest of its cgroup's memory.peak,
// its companion's step records (the allocator peak plus the host peak RSS, per process,
// summed: docs/companion.md) and the peak RSS of its process tree that the guard sampled.
struct JobPeak {
  uint64_t bytes = 0;
  std::string_view source;  // "cgroup", "step-records", "tree-rss"
};
std::optional<JobPeak> JobOwnPeak(const GuardSummary& summary);

// "MemAvailable 21.38 GiB fell below the kill level 21.40 GiB"; "MemAvailable 22.01 GiB,
// falling 1.20 GiB/s, was 0.5 s from the kill level 21.40 GiB"; the pressure's.
Message KillReadingLine(const GuardSummary& summary);
// "the job's own peak: 3.20 GiB (its cgroup's memory.peak)"; nullopt when none is known.
std::optional<Message> JobPeakLine(const GuardSummary& summary);

// The next step after a kill for memory: the OOM ladder for this job (docs/ladder.md), named
// from its command: `python3 train.py --batch 8` gives
// "headroom ladder start train --symptom step --match train.py".
std::string NextStepCommand(const std::vector<std::string>& command);

// The summary's "kill" object (null when the guard did not kill for memory).
nlohmann::json KillJson(const GuardSummary& summary);

}  // namespace headroom
