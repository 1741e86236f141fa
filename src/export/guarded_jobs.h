// The guards running now on this host, for `headroom export`: their levels (from the journal's
// guard records, top/running_guards.h) and their jobs' steps, counted from the companion's
// step records (samples/companion_records.h) that each guard recorded the path of. A job's
// records are read as they grow, a bounded amount per sample; a run that is no longer running
// is forgotten with its file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "export/metrics.h"
#include "samples/companion_records.h"
#include "sys/sysroot.h"
#include "top/running_guards.h"

namespace headroom {

// Steps read from one job's records: "step" records of rank 0, or of no rank (one process).
struct StepCount {
  uint64_t steps = 0;
  std::optional<double> last_wall_s;
};
void CountSteps(const std::vector<CompanionRecord>& records, StepCount& count);

class GuardedJobReader {
 public:
  GuardedJobReader(std::filesystem::path journal, SysRoot root, std::string host);
  // The running guards, with the steps read so far. Reads at most 1 MiB of each job's records.
  std::vector<GuardedJob> Read();

 private:
  struct Tail {
    std::unique_ptr<CompanionTail> tail;
    StepCount count;
  };
  RunningGuardReader guards_;
  std::map<int64_t, Tail> tails_;  // by run id
};

}  // namespace headroom
