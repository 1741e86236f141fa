// A sweep's results as files hold them: the knob columns, the CSV of --csv and the JSON
// of --json (schema_version 1, docs/sweep.md "Output"). English, the same in every locale;
// the Markdown table for people is the cli's.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "sweep/grid.h"
#include "sweep/sweep.h"

namespace headroom {

// The knob columns as (knob name, column title): batch, grad_accum, seq_len always (in that
// order), then the --param names in the grid's order.
std::vector<std::pair<std::string, std::string>> SweepColumns(const Grid& grid);

// The --csv file: a comment line (schema, run, limit), a header, one row per trial; an
// absent knob or measure is an empty field, notes are quoted as RFC 4180 says.
std::string SweepResultCsv(const SweepOptions& options, const SweepResult& result);

// SweepResultCsv written to `path` (replaced if it exists); an error naming --csv when the
// file cannot be opened or written.
Result<bool> WriteSweepResultCsv(const std::filesystem::path& path, const SweepOptions& options,
                                 const SweepResult& result);

// The --json document.
nlohmann::json SweepResultJson(const SweepOptions& options, const SweepResult& result);

}  // namespace headroom
