// A whole plan: footprint, budget, verdict, anchor and advice, and its JSON form
// (schema in docs/plan-json.md; bump kPlanSchemaVersion on any incompatible change).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/model_spec.h"
#include "plan/budget.h"
#include "plan/footprint.h"
#include "plan/plan_request.h"
#include "plan/verdict.h"
#include "plan/workload.h"

namespace headroom {

inline constexpr int kPlanSchemaVersion = 1;

// Marked for translation (N_): the terminal shows it translated; plan --json keeps it English.
inline constexpr const char* kPlanDisclaimer =
    N_("this is planning math, not a guarantee: frameworks differ by about 10 %; confirm with a "
       "guarded trial (headroom guard / headroom sweep)");

struct PlanResult {
  ModelSpec spec;
  std::string model_source;  // "catalog", "config", "params"
  std::vector<Message> model_notes;
  Workload workload;
  Footprint footprint;
  Budget budget;
  FootprintOptions options;  // what the footprint was computed with
  Verdict verdict = Verdict::kFits;
  AnchorMatch anchor;
  std::vector<Advice> advice;
  PlanSources sources;  // where each input field came from (PlanInputs::sources)
};

PlanResult MakePlan(const ModelSpec& spec, const Workload& workload, const Budget& budget,
                    const FootprintOptions& options);
// The plan of a resolved request, with its model's source and notes.
PlanResult MakePlan(const PlanInputs& inputs);

// Data, so English whatever the user's language: the footprint's labels, formulas and notes
// and the advice are the English text of their message values. Renders the footprint the
// plan holds; never computes one.
nlohmann::json PlanToJson(const PlanResult& plan);

// plan --list-models --json: the catalog, each model's shape and its published source.
nlohmann::json CatalogToJson();

}  // namespace headroom
