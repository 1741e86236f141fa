// OrNull: a reading that may be missing (docs/style.md rule 7) as JSON, its value or null.
// The JSON writers (pool/pool_survey, top/top_json, the guard's summary) share it; ordered_json
// by default, as they write, or nlohmann::json where the caller builds one.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

namespace headroom {

template <typename Json = nlohmann::ordered_json, typename T>
Json OrNull(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

}  // namespace headroom
