// Implementation notes.
//  - The holder survey needs NVML's process list with each process's memory; the Sampler
//    keeps only the pids. Rather than open NVML a second time (two contexts, twice the
//    driver calls), the backend handed to the Sampler is wrapped in a ProcessTap that
//    passes every reading through and keeps the last process list of each device.
//  - Events beyond the detector's (samples/sample_events.h): guard_started / guard_ended when a
//    running guard appears or goes between two journal reads, and pool_holder_started /
//    _ended between two surveys. None at the first read: what is there when top starts is
//    the state, not an event.
#include "top/collector.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "base/bytes.h"
#include "base/message.h"
#include "sys/holder_caps.h"
#include "sys/pool_holders.h"

namespace headroom {

class TopCollector::ProcessTap final : public GpuBackend {
 public:
  explicit ProcessTap(std::unique_ptr<GpuBackend> inner) : inner_(std::move(inner)) {}
  std::string_view backend_name() const override { return inner_->backend_name(); }
  unsigned device_count() const override { return inner_->device_count(); }
  GpuReading ReadDevice(unsigned index) override {
    GpuReading r = inner_->ReadDevice(index);
    last_[index] = r.processes;
    return r;
  }
  // Every device's last list together; nullopt when none could be read.
  std::optional<std::vector<GpuProcess>> processes() const {
    std::optional<std::vector<GpuProcess>> all;
    for (const auto& [index, list] : last_) {
      if (!list) continue;
      if (!all) all.emplace();
      all->insert(all->end(), list->begin(), list->end());
    }
    return all;
  }

 private:
  std::unique_ptr<GpuBackend> inner_;
  std::map<unsigned, std::optional<std::vector<GpuProcess>>> last_;
};

TopCollector::TopCollector(const SysRoot& root, std::unique_ptr<GpuBackend> gpu,
                           std::string gpu_note, CollectorOptions options)
    : root_(root), options_(std::move(options)), history_(options_.history_points) {
  // Checked here, not left to the Sampler (which drops a deviceless backend): the tap's
  // pointer must stay valid for as long as the Sampler has a GPU.
  if (gpu && gpu->device_count() == 0) {
    gpu.reset();
    gpu_note = "nvml: no GPU device";
  }
  if (gpu) {
    auto tap = std::make_unique<ProcessTap>(std::move(gpu));
    tap_ = tap.get();
    gpu = std::move(tap);
  }
  sampler_ = std::make_unique<Sampler>(root_, std::move(gpu));
  sampler_->OverridePlatform(options_.platform_override);
  detector_ = std::make_unique<SampleEventDetector>(sampler_->platform());
  if (options_.journal) guard_reader_.emplace(*options_.journal, root_, options_.host);
  snapshot_.platform = sampler_->platform();
  snapshot_.has_gpu = sampler_->has_gpu();
  snapshot_.gpu_note = gpu_note;
  snapshot_.guards_note = options_.journal ? "" : options_.journal_note;
}

TopCollector::~TopCollector() = default;

void TopCollector::AddEvent(WallTime now, std::string type, Message message, std::string data) {
  events_.Add(TopEvent{now, std::move(type), std::move(message), std::move(data)});
}

void TopCollector::Survey(WallTime now) {
  const auto gpu_list = tap_ ? tap_->processes() : std::nullopt;
  const auto holders = FindPoolHolders(root_, gpu_list, options_.self);
  std::vector<HolderRow> rows;
  rows.reserve(holders.size());
  for (const auto& h : holders) {
    const HolderCap cap = h.part_of
                              ? HolderCap{}
                              : ParseHolderCap(h.kind, CommandWords(h.facts.argv), h.facts.environ);
    rows.push_back(MakeHolderRow(h, cap));
  }
  if (surveyed_) {
    std::map<pid_t, const HolderRow*> before, after;
    for (const auto& r : snapshot_.holders) before[r.pid] = &r;
    for (const auto& r : rows) after[r.pid] = &r;
    for (const auto& [pid, r] : after) {
      if (before.count(pid) || r->part_of) continue;  // a server's new worker is the server's
      AddEvent(now, "pool_holder_started", Msg("{} (pid {}) holds the pool", r->kind, pid),
               nlohmann::json{{"pid", pid}, {"kind", r->kind}}.dump());
    }
    for (const auto& [pid, r] : before) {
      if (after.count(pid) || r->part_of) continue;
      AddEvent(now, "pool_holder_ended", Msg("{} (pid {}) is gone", r->kind, pid),
               nlohmann::json{{"pid", pid}, {"kind", r->kind}}.dump());
    }
  }
  surveyed_ = true;
  snapshot_.holders = std::move(rows);
  snapshot_.holders_time = now;
  snapshot_.holders_note = tap_ && !gpu_list ? Msg("NVML's process list not readable") : Message();
}

void TopCollector::ReadGuards(WallTime now) {
  std::string note;
  std::vector<RunningGuard> guards = guard_reader_->Read(note);
  if (guards_read_) {
    std::set<int64_t> before, after;
    for (const auto& g : snapshot_.guards) before.insert(g.run_id);
    for (const auto& g : guards) after.insert(g.run_id);
    for (const auto& g : guards) {
      if (before.count(g.run_id)) continue;
      // TRANSLATORS: {0} is the command that guards (guard, watch or sweep), kept as it is.
      AddEvent(now, "guard_started",
               g.warn_below_bytes > 0
                   ? Msg("{0} run {1} (pid {2}): kill below {3}, warn below {4}", g.kind, g.run_id,
                         g.guard_pid, GiB(g.kill_below_bytes), GiB(g.warn_below_bytes))
                   : Msg("{0} run {1} (pid {2}): kill below {3}, no warn level", g.kind, g.run_id,
                         g.guard_pid, GiB(g.kill_below_bytes)),
               nlohmann::json{{"run_id", g.run_id},
                              {"kind", g.kind},
                              {"guard_pid", g.guard_pid},
                              {"kill_below_bytes", g.kill_below_bytes},
                              {"warn_below_bytes", g.warn_below_bytes}}
                   .dump());
    }
    for (const auto& g : snapshot_.guards) {
      if (after.count(g.run_id)) continue;
      AddEvent(now, "guard_ended",
               Msg("{0} run {1} (pid {2}) ended", g.kind, g.run_id, g.guard_pid),
               nlohmann::json{{"run_id", g.run_id}, {"kind", g.kind}, {"guard_pid", g.guard_pid}}
                   .dump());
    }
  }
  guards_read_ = true;
  snapshot_.guards = std::move(guards);
  snapshot_.guards_note = note;
}

const TopSnapshot& TopCollector::Refresh(WallTime now,
                                         std::chrono::steady_clock::time_point steady) {
  snapshot_.sample = sampler_->Read(now);
  history_.Push(PointFromSample(snapshot_.sample));
  for (SampleEvent& e : detector_->Feed(snapshot_.sample)) {
    AddEvent(e.time, std::move(e.type), std::move(e.message), std::move(e.data));
  }
  if (!next_survey_ || steady >= *next_survey_) {
    Survey(now);
    next_survey_ = steady + options_.survey_period;
  }
  if (guard_reader_ && (!next_guards_ || steady >= *next_guards_)) {
    ReadGuards(now);
    next_guards_ = steady + options_.guard_period;
  }
  snapshot_.events.assign(events_.events().begin(), events_.events().end());
  snapshot_.events_total = events_.total();
  return snapshot_;
}

}  // namespace headroom
