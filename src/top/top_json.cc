// Implementation notes. ordered_json keeps the keys in the order written here, so the
// output is stable for diffs and for readers that look at it. An event's data is kept as
// the detector wrote it (a JSON object's text) and parsed back into the object, so --json
// nests it rather than quoting it as a string.
#include "top/top_json.h"

#include "base/json_null.h"
#include "base/wall_time.h"
#include "gpu/clock_events.h"

namespace headroom {
namespace {

using Json = nlohmann::ordered_json;

Json Nullable(const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); }

// An event's data is a JSON object's text; kept as an object (or null if it is not one).
Json DataJson(const std::string& text) {
  if (text.empty()) return Json::object();
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : Json(nullptr);
}

}  // namespace

Json TopSnapshotJson(const TopSnapshot& s, std::chrono::milliseconds interval,
                     const std::string& host) {
  const Sample& m = s.sample;
  const PlatformProfile& p = s.platform;
  std::optional<uint64_t> used;
  if (m.mem_total_bytes && m.mem_available_bytes && *m.mem_total_bytes >= *m.mem_available_bytes) {
    used = *m.mem_total_bytes - *m.mem_available_bytes;
  }
  Json reasons = nullptr;
  if (m.clock_event_reasons) reasons = DecodeClockEventReasons(*m.clock_event_reasons);

  Json guards = Json::array();
  for (const auto& g : s.guards) {
    guards.push_back({{"run_id", g.run_id},
                      {"kind", g.kind},
                      {"guard_pid", g.guard_pid},
                      {"kill_below_bytes", g.kill_below_bytes},
                      {"warn_below_bytes", g.warn_below_bytes},
                      {"started_at", g.started_at},
                      {"command", g.command}});
  }
  Json processes = Json::array();
  for (const auto& r : s.holders) {
    processes.push_back({{"pid", r.pid},
                         {"user", r.user},
                         {"kind", r.kind},
                         {"command", r.in_proc ? Json(r.command) : Json(nullptr)},
                         {"in_proc", r.in_proc},
                         {"rss_bytes", OrNull(r.rss_bytes)},
                         {"pss_bytes", OrNull(r.pss_bytes)},
                         {"gpu_bytes", OrNull(r.gpu_bytes)},
                         {"part_of", OrNull(r.part_of)},
                         {"cap",
                          {{"fraction", OrNull(r.cap_fraction)},
                           {"bytes", OrNull(r.cap_bytes)},
                           {"source", Nullable(r.cap_source)},
                           {"fixed_after_load", r.fixed_after_load}}}});
  }
  Json events = Json::array();
  for (const auto& e : s.events) {
    events.push_back({{"type", e.type},
                      {"wall_time", FormatUtcIso8601(e.time)},
                      {"message", EnglishText(e.message)},
                      {"data", DataJson(e.data)}});
  }
  return {
      {"schema_version", kTopJsonSchemaVersion},
      {"wall_time", FormatUtcIso8601(m.time)},
      {"host", host},
      {"interval_ms", interval.count()},
      {"platform",
       {{"kind", std::string(PlatformKindName(p.kind))},
        {"gpu_name", Nullable(p.gpu_name)},
        {"memory_source", p.memory_source == MemorySource::kNvml ? "nvml" : "meminfo"},
        {"sustained_power_mw", OrNull(p.sustained_power_mw)},
        {"rated_power_mw", OrNull(p.rated_power_mw)},
        {"normal_sm_clock_mhz", OrNull(p.normal_sm_clock_mhz)}}},
      {"gpu",
       {{"present", s.has_gpu},
        {"note", Nullable(s.gpu_note)},
        {"lost", m.gpu_lost},
        {"temperature_c", OrNull(m.temperature_c)},
        {"power_mw", OrNull(m.power_mw)},
        {"sm_clock_mhz", OrNull(m.sm_clock_mhz)},
        {"mem_clock_mhz", OrNull(m.mem_clock_mhz)},
        {"utilization_pct", OrNull(m.gpu_utilization_pct)},
        {"clock_event_reasons", OrNull(m.clock_event_reasons)},
        {"clock_event_reason_names", reasons},
        {"memory_total_bytes", OrNull(m.gpu_memory_total_bytes)},
        {"memory_used_bytes", OrNull(m.gpu_memory_used_bytes)}}},
      {"memory",
       {{"total_bytes", OrNull(m.mem_total_bytes)},
        {"available_bytes", OrNull(m.mem_available_bytes)},
        {"used_bytes", OrNull(used)},
        {"page_cache_bytes", OrNull(m.mem_cached_bytes)},
        {"free_bytes", OrNull(m.mem_free_bytes)},
        {"swap_used_bytes", OrNull(m.swap_used_bytes)}}},
      {"psi",
       {{"memory_some_avg10_pct", OrNull(m.psi_some_avg10_pct)},
        {"memory_full_avg10_pct", OrNull(m.psi_full_avg10_pct)}}},
      {"cpu_util_pct", OrNull(m.cpu_util_pct)},
      {"guards", guards},
      {"guards_note", Nullable(s.guards_note)},
      {"processes", processes},
      {"processes_note",
       s.holders_note.empty() ? Json(nullptr) : Json(EnglishText(s.holders_note))},
      {"events", events},
  };
}

}  // namespace headroom
