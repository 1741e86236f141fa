// Implementation notes: the records and the tree's RSS read the same processes' RSS, a few
// pages apart (the records are written a moment before the process ends); within
// kRecordsSlackBytes the records are the reading, beyond it the tree holds memory that no
// record counts (a DataLoader worker) and its RSS is.
#include "sweep/trial_peak.h"

namespace headroom {
namespace {

constexpr uint64_t kRecordsSlackBytes = 16ULL << 20;

}  // namespace

JudgedPeak JudgePeak(const PeakReadings& r) {
  JudgedPeak out;
  if (r.cgroup_bytes && *r.cgroup_bytes > 0) {
    out.own_bytes = *r.cgroup_bytes;
    out.own_measure = "cgroup";
  } else {
    if (r.tree_rss_bytes && *r.tree_rss_bytes > 0) {
      out.own_bytes = *r.tree_rss_bytes;
      out.own_measure = "tree-rss";
    }
    if (r.step_records_bytes &&
        (!out.own_bytes || *r.step_records_bytes + kRecordsSlackBytes >= *out.own_bytes)) {
      out.own_bytes = *r.step_records_bytes;
      out.own_measure = "step-records";
    }
  }
  // The records count the device allocator too: the job's whole peak, which the pool's fall
  // (another process's memory in it) would only blur. The other readings can miss device
  // memory (unified memory: in no RSS, and the driver's pages are not charged to a cgroup),
  // so the fall may raise them.
  const bool complete = out.own_measure == "step-records";
  if (out.own_bytes && (complete || *out.own_bytes >= r.pool_fall_bytes)) {
    out.bytes = *out.own_bytes;
    out.measure = out.own_measure;
  } else {
    out.bytes = r.pool_fall_bytes;
    out.measure = "memavailable";
  }
  return out;
}

}  // namespace headroom
