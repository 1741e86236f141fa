// `headroom report` on the terminal, in the user's language: the line that says what was
// written. The page and --json are the library's (report/report_data.h).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli.h"

namespace headroom {

// "wrote report.html (1.23 MB): 3600 rows in 2000 buckets of 1.8 s, 4 events[, 1 slowdowns]",
// from the page's size and its data (the slowdowns when a log was drawn, `with_log`).
void PrintReportWritten(const CliEnv& env, const std::string& out_path, size_t page_bytes,
                        const nlohmann::ordered_json& data, bool with_log);

}  // namespace headroom
