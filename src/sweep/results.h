// A sweep's results as files hold them: the knob columns, the CSV of --csv and the JSON
// of --json (schema_version 1, docs/sweep.md "Output"). English, the same in every locale;
// the Markdown table for people is the cli's.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sweep/grid.h"
#include "sweep/sweep.h"

namespace headroom {

// The knob columns as (knob name, column title): batch, grad_accum, seq_len always (in that
// order), then the --param names in the grid's order.
std::vector<std::pair<std::string, std::string>> SweepColumns(const Grid& grid);

// The --csv file: a comment line (schema, run, limit), a header, one row per trial; an
// absent knob or measure is an empty field, notes are quoted as RFC 4180 says.
std::string SweepResultCsv(const SweepOptions& options, const SweepResult& result);

// The --json document.
nlohmann::json SweepResultJson(const SweepOptions& options, const SweepResult& result);

}  // namespace headroom
