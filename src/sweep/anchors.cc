#include "sweep/anchors.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace headroom {

Result<std::vector<MeasuredAnchor>> ReadMeasuredAnchors(Journal& journal, int max_runs) {
  auto runs = journal.RecentRuns(max_runs);
  if (!runs) return runs.error();
  std::vector<MeasuredAnchor> out;
  for (const RunRow& run : *runs) {
    if (run.kind != "sweep" || run.status != "done" || !run.summary_json) continue;
    const auto j = nlohmann::json::parse(*run.summary_json, nullptr, false);
    if (!j.is_object() || !j.contains("best") || !j["best"].is_object()) continue;
    const auto& peak = j.value("best_peak_bytes", nlohmann::json());
    if (!peak.is_number_unsigned()) continue;
    MeasuredAnchor a;
    a.run_id = run.id;
    a.ended_at = run.ended_at.value_or("");
    a.command = run.command;
    a.peak_bytes = peak.get<uint64_t>();
    if (j.contains("limit_bytes") && j["limit_bytes"].is_number_unsigned())
      a.limit_bytes = j["limit_bytes"].get<uint64_t>();
    if (j.contains("model") && j["model"].is_string()) a.model = j["model"].get<std::string>();
    if (j.contains("method") && j["method"].is_string()) a.method = j["method"].get<std::string>();
    if (const auto plan = j.find("plan"); plan != j.end() && plan->is_object()) {
      const auto knob = plan->find("knob");
      const auto value = plan->find("value");
      if (knob != plan->end() && knob->is_string() && value != plan->end() &&
          value->is_number_integer()) {
        a.plan_knob = knob->get<std::string>();
        a.plan_value = value->get<int64_t>();
      }
    }
    for (const auto& [name, value] : j["best"].items()) {
      if (!value.is_number_integer()) continue;
      const int64_t v = value.get<int64_t>();
      if (!a.config_text.empty()) a.config_text += ' ';
      a.config_text += fmt::format("{}={}", name, v);
      if (name == "batch") a.batch = v;
      if (name == "seq") a.seq = v;
      if (name == "grad_accum") a.grad_accum = v;
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace headroom
