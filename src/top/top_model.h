// The model of `headroom top`: one TopSnapshot per refresh, built from a Sampler sample, the
// pool-holder survey (what `headroom ps` lists, with caps), the running guards' levels and
// the events seen so far. Plain data and pure functions (sorting, the cap's words), so the
// view and --json are tested on literal snapshots; top/collector.h fills it from the system.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/message.h"
#include "base/wall_time.h"
#include "gpu/platform.h"
#include "samples/sampler.h"
#include "sys/holder_caps.h"
#include "sys/pool_holders.h"

namespace headroom {

// How the process table is ordered; `s` cycles through them in this order.
enum class SortOrder { kMemory, kPid, kName };

// "mem", "pid", "name": the --sort values and the --json field. Never translated.
std::string_view SortOrderName(SortOrder order);
std::optional<SortOrder> ParseSortOrder(std::string_view text);
SortOrder NextSortOrder(SortOrder order);

// One row of the process table: a pool holder and its cap, flattened.
struct HolderRow {
  pid_t pid = 0;
  std::string user;
  std::string kind;     // HolderKindName
  std::string command;  // DisplayCommand (secrets masked); empty when not in this pid namespace
  bool in_proc = true;
  std::optional<uint64_t> rss_bytes;
  std::optional<uint64_t> pss_bytes;
  std::optional<uint64_t> gpu_bytes;
  std::optional<pid_t> part_of;
  std::optional<double> cap_fraction;
  std::optional<uint64_t> cap_bytes;
  std::string cap_source;  // "--gpu-memory-utilization", "vLLM default", ...
  bool fixed_after_load = false;
};

HolderRow MakeHolderRow(const PoolHolder& holder, const HolderCap& cap);

// What a holder holds for the memory sort: NVML's figure when there is one (CUDA memory on
// GB10 is in no RSS), else PSS, else RSS, else 0.
uint64_t HolderMemoryBytes(const HolderRow& row);

// Memory: largest first; pid: ascending; name: by kind, then command, then pid. Ties keep
// pid order, so a refresh does not shuffle equal rows.
void SortHolders(std::vector<HolderRow>& rows, SortOrder order);

// A guarded run whose guard is alive on this host, with its levels (guard/guard_record.h).
struct RunningGuard {
  int64_t run_id = 0;
  std::string kind;  // the run's kind in the journal: "guard", "watch" (--guard) or "sweep"
  pid_t guard_pid = 0;
  uint64_t kill_below_bytes = 0;
  uint64_t warn_below_bytes = 0;  // 0: none (a sweep's trials)
  std::string started_at;         // ISO-8601 UTC, as the journal has it
  std::vector<std::string> command;
  std::string step_records;  // the companion's records the job writes, "" when not known
};

// An event shown in the events pane and in --json.
struct TopEvent {
  WallTime time{};
  std::string type;  // "clock_collapse", "guard_started", ... (never translated)
  Message message;   // one line for people
  std::string data;  // a JSON object's text
};

// The newest events, at most `capacity`, oldest first.
class EventLog {
 public:
  explicit EventLog(size_t capacity = 200) : capacity_(capacity) {}
  void Add(TopEvent event);
  const std::deque<TopEvent>& events() const { return events_; }
  uint64_t total() const { return total_; }  // ever added, dropped ones included

 private:
  size_t capacity_;
  std::deque<TopEvent> events_;
  uint64_t total_ = 0;
};

struct TopSnapshot {
  Sample sample;
  PlatformProfile platform;
  bool has_gpu = false;
  std::string gpu_note;            // why there is no GPU reading ("nvml: dlopen(...): ..."), or ""
  std::vector<HolderRow> holders;  // pid order; the view sorts
  std::optional<WallTime> holders_time;
  Message holders_note;  // e.g. the NVML process list could not be read
  std::vector<RunningGuard> guards;
  std::string guards_note;       // why guards cannot be seen (no journal), or ""
  std::vector<TopEvent> events;  // the newest, oldest first
  uint64_t events_total = 0;
};

}  // namespace headroom
