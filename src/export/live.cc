// Implementation notes. Decimation keeps every k-th point and always the newest, so the
// client's chart ends at the current reading. The day tier folds the samples of one minute
// into one point, keeping the lowest MemAvailable (the dip a guard acts on), the highest power
// and temperature, and the last of the other figures.
#include "export/live.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/message.h"

namespace headroom {
namespace {

using Json = nlohmann::ordered_json;

Json Figure(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

Json PointJson(const LivePoint& p) {
  return Json::array({p.t, Figure(p.available_bytes), Figure(p.used_bytes),
                      Figure(p.page_cache_bytes), Figure(p.power_w), Figure(p.temperature_c),
                      Figure(p.sm_clock_mhz), Figure(p.steps)});
}

Json Decimated(const std::deque<LivePoint>& points, size_t max_out) {
  Json out = Json::array();
  if (points.empty()) return out;
  const size_t step = (points.size() + max_out - 1) / max_out;
  // Counted back from the newest, so the newest is always sent.
  const size_t first = (points.size() - 1) % step;
  for (size_t i = first; i < points.size(); i += step) out.push_back(PointJson(points[i]));
  return out;
}

std::optional<double> Lower(const std::optional<double>& a, const std::optional<double>& b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

std::optional<double> Higher(const std::optional<double>& a, const std::optional<double>& b) {
  if (!a) return b;
  if (!b) return a;
  return std::max(*a, *b);
}

}  // namespace

void LiveHistory::Add(const LivePoint& p) {
  // At most one recent point a second, the newest always kept: while the last point is
  // within a second of the one before it, a sample replaces it (a 100 ms interval holds no
  // more points than a 1 s one).
  const size_t n = recent_.size();
  if (n >= 2 && p.t >= recent_[n - 1].t && recent_[n - 1].t - recent_[n - 2].t < 1.0) {
    recent_.back() = p;
  } else {
    recent_.push_back(p);
  }
  while (!recent_.empty() && (p.t - recent_.front().t > kRecentSeconds || recent_.size() > 900))
    recent_.pop_front();

  const double minute = std::floor(p.t / 60) * 60;
  if (!day_.empty() && std::floor(day_.back().t / 60) * 60 == minute) {
    LivePoint& m = day_.back();
    const LivePoint kept = m;
    m = p;
    m.available_bytes = Lower(kept.available_bytes, p.available_bytes);
    m.power_w = Higher(kept.power_w, p.power_w);
    m.temperature_c = Higher(kept.temperature_c, p.temperature_c);
  } else {
    day_.push_back(p);
  }
  while (!day_.empty() && (p.t - day_.front().t > kDaySeconds || day_.size() > 1440))
    day_.pop_front();
}

Json LiveHistory::ToJson() const {
  return {{"fields",
           {"t", "available_bytes", "used_bytes", "page_cache_bytes", "power_w", "temperature_c",
            "sm_clock_mhz", "steps"}},
          {"recent", Decimated(recent_, kMaxPointsOut)},
          {"day", Decimated(day_, kMaxPointsOut)}};
}

LivePoint LivePointOf(const ExportSnapshot& s, double unix_seconds) {
  LivePoint p;
  p.t = unix_seconds;
  if (s.meminfo) {
    const auto total = s.meminfo->total_bytes();
    if (const auto a = s.meminfo->EstimatedAvailable()) {
      p.available_bytes = static_cast<double>(a->bytes);
      if (total && *total >= a->bytes) p.used_bytes = static_cast<double>(*total - a->bytes);
    }
    if (const auto c = s.meminfo->cached_bytes()) p.page_cache_bytes = static_cast<double>(*c);
  }
  if (!s.gpus.empty()) {
    const GpuReading& g = s.gpus.front();
    if (g.power_mw) p.power_w = *g.power_mw / 1000.0;
    if (g.temperature_c) p.temperature_c = static_cast<double>(*g.temperature_c);
    if (g.sm_clock_mhz) p.sm_clock_mhz = static_cast<double>(*g.sm_clock_mhz);
  }
  for (const auto& j : s.guarded) {
    if (j.steps) p.steps = p.steps.value_or(0) + static_cast<double>(*j.steps);
  }
  return p;
}

Json GuardedJobsJson(const std::vector<GuardedJob>& jobs) {
  Json out = Json::array();
  for (const auto& j : jobs) {
    out.push_back({{"run_id", j.run_id},
                   {"kind", j.kind},
                   {"kill_below_bytes", j.kill_below_bytes},
                   {"warn_below_bytes", j.warn_below_bytes},
                   {"steps", j.steps ? Json(*j.steps) : Json(nullptr)},
                   {"last_step_unix_s", Figure(j.last_step_wall_s)}});
  }
  return out;
}

LiveNodes::LiveNodes(std::vector<NodeUrl> nodes, std::chrono::milliseconds period)
    : nodes_(std::move(nodes)), period_(period), results_(nodes_.size()) {}

void LiveNodes::Run() {
  while (true) {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      NodeState r;
      auto body = FetchNodeMetrics(nodes_[i], std::chrono::milliseconds(2000), kMaxBytes);
      if (!body) {
        r.error = EnglishText(body.error().what);
      } else {
        auto j = Json::parse(*body, nullptr, /*allow_exceptions=*/false);
        if (!j.is_object() || !j.contains("now")) {
          r.error = "not a headroom export live page";
        } else {
          r.ok = true;
          r.error.clear();
          r.now = std::move(j["now"]);
          if (j.contains("history")) r.history = std::move(j["history"]);
        }
      }
      std::lock_guard lock(mu_);
      results_[i] = std::move(r);
    }
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, period_, [&] { return stop_; })) return;
  }
}

void LiveNodes::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
}

Json LiveNodes::ToJson() const {
  std::lock_guard lock(mu_);
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const NodeState& r = results_[i];
    out.push_back(
        {{"url", nodes_[i].text},
         {"ok", r.ok},
         {"error", r.ok ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.error)},
         {"now", r.now},
         {"history", r.history}});
  }
  return out;
}

std::string LiveJsonBody(Json now, const std::vector<GuardedJob>& jobs, const LiveHistory& history,
                         const LiveNodes* nodes) {
  now["guarded_jobs"] = GuardedJobsJson(jobs);
  Json body = {{"schema_version", 1},
               {"now", std::move(now)},
               {"history", history.ToJson()},
               {"nodes", nodes ? nodes->ToJson() : Json::array()}};
  // replace: a process name or a host name need not be UTF-8.
  return body.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<NodeUrl> ParseLiveNodeUrl(std::string_view url) {
  auto parsed = ParseNodeUrl(url);
  if (parsed) parsed->path = "/live.json";
  return parsed;
}

}  // namespace headroom
