// `headroom top --node URL ...`: one pane of plain text per node, from the /metrics page of
// its `headroom export` (top/node_metrics.h), in the user's language.
#pragma once

#include <string>

#include "base/result.h"
#include "top/node_metrics.h"

namespace headroom {

// "node http://10.0.0.2:9464/metrics (gb10)\n  memory ...\n": the figures the page had, or
// one line saying why the node could not be read.
std::string NodePaneText(const NodeUrl& url, const Result<NodeMetrics>& read);

}  // namespace headroom
