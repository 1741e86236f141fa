// explain's table for the terminal, in the user's language: the summary, the step rate and
// each slowdown with its verdict, evidence and advice (explain/explain_report.h has the data
// and its JSON).
#pragma once

#include <string>

#include "explain/explain_report.h"

namespace headroom {

std::string ExplainReportText(const ExplainReport& report);

}  // namespace headroom
