#include "export/guarded_jobs.h"

#include <utility>

namespace headroom {

void CountSteps(const std::vector<CompanionRecord>& records, StepCount& count) {
  for (const auto& r : records) {
    if (r.kind != CompanionKind::kStep || (r.rank && *r.rank != 0)) continue;
    ++count.steps;
    if (!count.last_wall_s || r.wall_s > *count.last_wall_s) count.last_wall_s = r.wall_s;
  }
}

GuardedJobReader::GuardedJobReader(std::filesystem::path journal, SysRoot root, std::string host)
    : guards_(std::move(journal), std::move(root), std::move(host)) {}

std::vector<GuardedJob> GuardedJobReader::Read() {
  std::string note;  // an unreadable journal is no guard; the counters say the rest
  const auto running = guards_.Read(note);
  std::map<int64_t, Tail> kept;
  std::vector<GuardedJob> out;
  for (const RunningGuard& g : running) {
    GuardedJob job{g.run_id,           g.kind,       g.kill_below_bytes,
                   g.warn_below_bytes, std::nullopt, std::nullopt};
    if (!g.step_records.empty()) {
      auto it = tails_.find(g.run_id);
      Tail t = it != tails_.end() ? std::move(it->second)
                                  : Tail{std::make_unique<CompanionTail>(g.step_records), {}};
      CountSteps(t.tail->Poll(), t.count);
      job.steps = t.count.steps;
      job.last_step_wall_s = t.count.last_wall_s;
      kept.emplace(g.run_id, std::move(t));
    }
    out.push_back(std::move(job));
  }
  tails_ = std::move(kept);
  return out;
}

}  // namespace headroom
