#include "plan/measured_anchors.h"

#include "model/catalog.h"
#include "plan/footprint.h"
#include "store/journal.h"

namespace headroom {

std::vector<ShownAnchor> MatchMeasuredAnchors(const std::vector<MeasuredAnchor>& anchors,
                                              const ModelSpec& spec, const std::string& model_name,
                                              const Workload& workload) {
  std::vector<ShownAnchor> out;
  const std::string name = NormalizeModelName(spec.name);
  for (const auto& a : anchors) {
    if (!a.model.empty() && NormalizeModelName(a.model) != name &&
        NormalizeModelName(a.model) != NormalizeModelName(model_name)) {
      continue;
    }
    ShownAnchor shown{a, std::nullopt};
    if (!a.model.empty() && !a.method.empty() && a.method == std::string(Name(workload.method))) {
      Workload w = workload;
      if (a.batch) w.batch = *a.batch;
      if (a.seq) w.seq = *a.seq;
      // Planned with the plan's own stack (the journal does not record the sweep's): the
      // plan says which (ShownAnchor::framework).
      shown.estimate_bytes = ComputeFootprint(spec, w).peak_bytes();
      shown.framework = workload.framework;
    }
    out.push_back(std::move(shown));
    if (out.size() == kMaxLocalAnchors) break;
  }
  return out;
}

std::vector<ShownAnchor> LocalAnchors(const std::filesystem::path& journal, const ModelSpec& spec,
                                      const std::string& model_name, const Workload& workload) {
  std::error_code ec;
  if (!std::filesystem::exists(journal, ec)) return {};
  auto opened = Journal::Open(journal, JournalOptions{.read_only = true});
  if (!opened) return {};
  auto anchors = ReadMeasuredAnchors(*opened);
  if (!anchors) return {};
  return MatchMeasuredAnchors(*anchors, spec, model_name, workload);
}

nlohmann::json LocalAnchorsJson(const std::vector<ShownAnchor>& anchors) {
  using nlohmann::json;
  json out = json::array();
  for (const auto& s : anchors) {
    const auto& a = s.anchor;
    out.push_back(
        {{"run_id", a.run_id},
         {"ended_at", a.ended_at},
         {"model", a.model.empty() ? json(nullptr) : json(a.model)},
         {"method", a.method.empty() ? json(nullptr) : json(a.method)},
         {"command", a.command},
         {"config", a.config_text},
         {"batch", a.batch ? json(*a.batch) : json(nullptr)},
         {"seq", a.seq ? json(*a.seq) : json(nullptr)},
         {"peak_bytes", a.peak_bytes},
         {"plan_estimate_bytes", s.estimate_bytes ? json(*s.estimate_bytes) : json(nullptr)},
         {"planned_as", s.estimate_bytes ? json(Name(s.framework)) : json(nullptr)},
         // sweep --start plan: the value plan --solve said (docs/sweep.md).
         {"plan_said",
          a.plan_value ? json{{"knob", a.plan_knob}, {"value", *a.plan_value}} : json(nullptr)}});
  }
  return out;
}

}  // namespace headroom
