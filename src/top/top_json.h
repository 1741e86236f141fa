// `headroom top --once --json`: one snapshot as a JSON object (schema_version 1,
// docs/top.md). Data, not text for people: keys and values are never translated, every
// figure carries its unit in its name (bytes, _mw, _mhz, _c, _pct), a reading that is not
// there is null (never 0), and the shape is the same on every platform.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "top/top_model.h"

namespace headroom {

inline constexpr int kTopJsonSchemaVersion = 1;

nlohmann::ordered_json TopSnapshotJson(const TopSnapshot& snapshot,
                                       std::chrono::milliseconds interval, const std::string& host);

}  // namespace headroom
