// The data side of `headroom top` (btop's split: collection here, drawing in top_view):
// each Refresh takes one Sampler sample (GPU, /proc/meminfo, PSI, CPU), feeds the event
// detector, and, when due, surveys the pool holders (as `headroom ps` does) and reads the
// running guards from the journal; the result is one TopSnapshot plus a point of history.
//
// Costs, measured by bench/top_cost.py (docs/top.md): a sample is well under a millisecond;
// the survey reads two files per process (stat and cmdline, plus maps for a bare python), a
// few milliseconds on a desktop's few hundred processes, so it runs every survey_period
// rather than every sample; the journal read is a query or two, every guard_period.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "gpu/gpu.h"
#include "samples/sample_events.h"
#include "samples/sampler.h"
#include "sys/sysroot.h"
#include "top/history.h"
#include "top/running_guards.h"
#include "top/top_model.h"

namespace headroom {

struct CollectorOptions {
  // How often the pool holders are surveyed and the journal read (and at the first refresh).
  std::chrono::milliseconds survey_period{5000};
  std::chrono::milliseconds guard_period{2000};
  // The journal to find running guards in; nullopt: none (journal_note says why).
  std::optional<std::filesystem::path> journal;
  std::string journal_note;
  std::string host;  // this machine's name, to tell its guards from other hosts'
  pid_t self = 0;    // left out of the survey
  size_t history_points = kDefaultHistoryPoints;
  // The user's word on the platform ([platform] in config.toml, HEADROOM_PLATFORM...), over
  // what the first sample detects.
  PlatformOverride platform_override;
};

class TopCollector {
 public:
  // `gpu` may be null (no NVML: `gpu_note` says why). A backend with no device counts as
  // none, with a note.
  TopCollector(const SysRoot& root, std::unique_ptr<GpuBackend> gpu, std::string gpu_note,
               CollectorOptions options);
  ~TopCollector();
  TopCollector(const TopCollector&) = delete;
  TopCollector& operator=(const TopCollector&) = delete;

  // One refresh: a sample stamped `now`; the survey and the guards when due by `steady`.
  const TopSnapshot& Refresh(WallTime now, std::chrono::steady_clock::time_point steady);

  const TopSnapshot& snapshot() const { return snapshot_; }
  const History& history() const { return history_; }
  const PlatformProfile& platform() const { return sampler_->platform(); }

 private:
  class ProcessTap;  // a GpuBackend that keeps the last process list (collector.cc)

  void Survey(WallTime now);
  void ReadGuards(WallTime now);
  void AddEvent(WallTime now, std::string type, Message message, std::string data);

  SysRoot root_;
  CollectorOptions options_;
  ProcessTap* tap_ = nullptr;  // owned by sampler_; null without a GPU
  std::unique_ptr<Sampler> sampler_;
  std::unique_ptr<SampleEventDetector> detector_;
  std::optional<RunningGuardReader> guard_reader_;
  History history_;
  EventLog events_;
  TopSnapshot snapshot_;
  std::optional<std::chrono::steady_clock::time_point> next_survey_, next_guards_;
  bool surveyed_ = false;
  bool guards_read_ = false;
};

}  // namespace headroom
