// The body of the plan request fuzz target (fuzz/plan_request_fuzz.cc), shared with
// tests/fuzz_corpus_test.cc, which replays fuzz/corpus/plan_request/ in every build. Returns
// false when an invariant breaks (see plan_request_fuzz.cc for the list).
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "plan/plan_request.h"

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

}  // namespace headroom::fuzz
