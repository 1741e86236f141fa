// Which reading a trial is judged by (issue 31, docs/sweep.md "Peak"). The fall in
// MemAvailable over a trial is the pool's, not the job's: another process freeing memory
// during the trial hides part of the job (a batch 300-500 MiB over the limit read ok), one
// taking memory adds to it. So the job's own peak comes first, from the best source there is:
//   cgroup        the trial's own cgroup's memory.peak (guard/job_cgroup.h): everything the
//                 job's processes were charged, sampled by the kernel;
//   tree-rss      the process tree's peak RSS (the guard's samples and ru_maxrss at reaping);
//   step-records  the companion's step records: torch allocator peak + host peak RSS, which
//                 sees device memory that RSS misses on unified memory;
// Without a cgroup the records win over the tree's RSS unless the tree holds more (memory of
// processes that write no records). The pool's fall is a second reading that can only raise
// the cgroup's or the tree's figure ("memavailable" when it does): those can miss device
// memory on unified memory. The records count the device allocator, so their figure stands
// whatever else moves the pool.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace headroom {

struct PeakReadings {
  std::optional<uint64_t> cgroup_bytes;
  std::optional<uint64_t> tree_rss_bytes;      // 0 or none: not measured
  std::optional<uint64_t> step_records_bytes;  // none: no records
  uint64_t pool_fall_bytes = 0;                // MemAvailable at the start minus its lowest
};

struct JudgedPeak {
  uint64_t bytes = 0;   // what the trial is judged by
  std::string measure;  // the reading that gave `bytes`: cgroup, tree-rss, step-records,
                        // memavailable
  std::optional<uint64_t> own_bytes;  // the job's own reading, when there is one
  std::string own_measure;            // its source; "" when none
};

JudgedPeak JudgePeak(const PeakReadings& readings);

}  // namespace headroom
