// `headroom export`'s live page (docs/export.md, "The live page"): what /live.json serves and
// the page at / polls. The sampler's thread builds the body once per sample (a request only
// copies it), from three parts:
//
//   - `now`: `headroom top --json`'s snapshot (top/top_json.h): the pool, the GPU against its
//     caps, throttle reasons, the processes holding the pool with their caps, the running
//     guards' levels, the last events; plus the guarded jobs' steps (export/guarded_jobs.h);
//   - `history`: LiveHistory's points, bounded on the server (15 minutes at the sampling
//     period, 24 hours by the minute) and decimated for the client;
//   - `nodes`: other machines' own /live.json (`--node URL`), fetched by LiveNodes' thread
//     with a deadline and a size limit.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "export/metrics.h"
#include "top/node_metrics.h"

namespace headroom {

// One point of the live charts. Absent readings stay absent (null in the JSON, never 0).
struct LivePoint {
  double t = 0;  // Unix time, seconds
  std::optional<double> available_bytes, used_bytes, page_cache_bytes;
  std::optional<double> power_w, temperature_c, sm_clock_mhz;
  std::optional<double> steps;  // the guarded jobs' steps, summed (a counter)
};

// The last 15 minutes at the sampling period (at most one point a second, so at most 900),
// and the last 24 hours by the minute (at most 1440 points: per minute the lowest
// MemAvailable, the highest power and temperature, the last of the rest). Memory is bounded
// whatever the interval or the uptime.
class LiveHistory {
 public:
  static constexpr double kRecentSeconds = 15 * 60;
  static constexpr double kDaySeconds = 24 * 3600;
  static constexpr size_t kMaxPointsOut = 300;  // per series sent to the client

  void Add(const LivePoint& p);
  // {"recent": [...], "day": [...]}, each at most kMaxPointsOut points (every k-th), each
  // point [t, available, used, page_cache, power_w, temperature_c, sm_clock_mhz, steps].
  nlohmann::ordered_json ToJson() const;
  size_t recent_size() const { return recent_.size(); }
  size_t day_size() const { return day_.size(); }

 private:
  std::deque<LivePoint> recent_;
  std::deque<LivePoint> day_;  // one per minute; the newest is the minute being filled
};

// The live point of one export snapshot.
LivePoint LivePointOf(const ExportSnapshot& s, double unix_seconds);

// The guarded jobs' steps, for `now`: [{"run_id", "kind", "steps", "last_step_unix_s"}].
nlohmann::ordered_json GuardedJobsJson(const std::vector<GuardedJob>& jobs);

// Other machines' /live.json, each fetched every `period` within `timeout` and at most
// `max_bytes` (top/node_metrics.h's bounded GET). Runs on its own thread until Stop.
class LiveNodes {
 public:
  static constexpr size_t kMaxNodes = 16;
  // A node's /live.json is about 60 kB (2 x 300 points and its snapshot); the limit bounds what
  // one page body (one per connection) can hold: 16 nodes x 512 KiB at most.
  static constexpr size_t kMaxBytes = 512 << 10;

  explicit LiveNodes(std::vector<NodeUrl> nodes, std::chrono::milliseconds period);
  void Run();
  void Stop();
  // [{"url", "ok", "error", "now", "history"}] in the order given; a node not yet fetched
  // is ok=false with error "not fetched yet".
  nlohmann::ordered_json ToJson() const;
  bool empty() const { return nodes_.empty(); }

 private:
  struct NodeState {
    bool ok = false;
    std::string error = "not fetched yet";
    nlohmann::ordered_json now, history;
  };
  std::vector<NodeUrl> nodes_;
  std::chrono::milliseconds period_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<NodeState> results_;
};

// /live.json's body: {"schema_version": 1, "now": top's snapshot with "guarded_jobs" added,
// "history": LiveHistory's, "nodes": LiveNodes' (or [])}.
std::string LiveJsonBody(nlohmann::ordered_json now, const std::vector<GuardedJob>& jobs,
                         const LiveHistory& history, const LiveNodes* nodes);

// "http://HOST:PORT[/PATH]" for --node: the node's /live.json whatever path was given (the
// metrics URL top takes works as well). Errors as ParseNodeUrl's.
Result<NodeUrl> ParseLiveNodeUrl(std::string_view url);

// The page at / (share/export/live.html, compiled into the binary at build time).
std::string_view LivePage();

}  // namespace headroom
