// The body of the plan request fuzz target (fuzz/plan_request_fuzz.cc), shared with
// tests/fuzz_corpus_test.cc, which replays fuzz/corpus/plan_request/ in every build. Returns
// false when an invariant breaks (see plan_request_fuzz.cc for the list).
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "plan/plan_fields.h"
#include "plan/plan_request.h"
#include "plan/run_config.h"

namespace headroom::fuzz {

inline bool PlanRequestHolds(std::string_view text) {
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  Message error;
  const auto request = headroom::PlanRequestFromJson(json, &error);
  if (!request) return !headroom::EnglishText(error).empty();  // refused, and says why
  // Read back, a request's JSON form reads again to the same form.
  const nlohmann::json form = headroom::PlanRequestToJson(*request);
  Message again_error;
  const auto again = headroom::PlanRequestFromJson(form, &again_error);
  return again && headroom::PlanRequestToJson(*again) == form;
}

// plan --from's front end (plan/run_config.h, fuzz/run_config_fuzz.cc). Invariants: no crash
// and bounded work on any text; a refused file has a message that names it; an accepted one
// names its format, sets only fields a run configuration can set (plan/plan_fields), and its flag
// text goes through ParsePlanRequest (accepted or refused with a message) without a crash.
inline bool RunConfigHolds(std::string_view text) {
  auto config = headroom::ParseRunConfig(text, "fuzz.yaml", {});
  if (!config) return headroom::EnglishText(config.error().what).starts_with("fuzz.yaml");
  if (headroom::Name(config->format).empty()) return false;
  headroom::PlanFlagText flags = config->text;
  for (const auto& field : config->set) {
    const headroom::PlanField* f = headroom::FindPlanField(field);
    if (f == nullptr || !f->run_config) return false;
  }
  Message error;
  const auto request = headroom::ParsePlanRequest(flags, &error);
  return request || !headroom::EnglishText(error).empty();
}

}  // namespace headroom::fuzz
