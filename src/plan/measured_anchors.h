// Measured anchors beside a plan: the answers of finished sweeps in the journal
// (sweep/anchors.h) for this model (or unlabelled ones), each with this planner's estimate of
// the same setup where the method matches; and their JSON ("measured_anchors" in plan --json,
// docs/plan-json.md). A journal that does not exist or cannot be read means no measured
// anchors, never an error of plan's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/model_spec.h"
#include "plan/workload.h"
#include "sweep/anchors.h"

namespace headroom {

struct ShownAnchor {
  MeasuredAnchor anchor;
  std::optional<uint64_t> estimate_bytes;  // this planner's peak for the sweep's answer
  Framework framework = Framework::kHf;    // the stack the estimate was planned with
};

inline constexpr size_t kMaxLocalAnchors = 5;

// The anchors among `anchors` (newest first) that are for `spec` (or for `model_name`, the
// name as the user gave it) or unlabelled, at most kMaxLocalAnchors.
std::vector<ShownAnchor> MatchMeasuredAnchors(const std::vector<MeasuredAnchor>& anchors,
                                              const ModelSpec& spec, const std::string& model_name,
                                              const Workload& workload);

// The same, read from the journal at `journal` (opened read-only).
std::vector<ShownAnchor> LocalAnchors(const std::filesystem::path& journal, const ModelSpec& spec,
                                      const std::string& model_name, const Workload& workload);

nlohmann::json LocalAnchorsJson(const std::vector<ShownAnchor>& anchors);

}  // namespace headroom
