// A whole plan: footprint, budget, verdict, anchor and advice, and its JSON form
// (schema in docs/plan-json.md; bump kPlanSchemaVersion on any incompatible change).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/i18n.h"
#include "model/model_spec.h"
#include "plan/budget.h"
#include "plan/footprint.h"
#include "plan/verdict.h"
#include "plan/workload.h"

namespace headroom {

inline constexpr int kPlanSchemaVersion = 1;

// Marked for translation: the terminal shows Tr(kPlanDisclaimer); plan --json keeps it English.
inline constexpr const char* kPlanDisclaimer =
    N_("this is planning math, not a guarantee: frameworks differ by about 10 %; confirm with a "
       "guarded trial (headroom guard / headroom sweep)");

struct PlanResult {
  ModelSpec spec;
  std::string model_source;  // "catalog", "config", "params"
  std::vector<std::string> model_notes;
  Workload workload;
  Footprint footprint;
  Budget budget;
  FootprintOptions options;  // what the footprint was computed with (PlanToJson re-plans)
  Verdict verdict = Verdict::kFits;
  AnchorMatch anchor;
  std::vector<Advice> advice;
};

PlanResult MakePlan(const ModelSpec& spec, const Workload& workload, const Budget& budget,
                    const FootprintOptions& options);

// Data, so English whatever the user's language: the footprint's labels, formulas and notes
// are re-planned inside an UntranslatedScope, and the advice is its English text.
nlohmann::json PlanToJson(const PlanResult& plan);

}  // namespace headroom
