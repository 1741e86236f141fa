// top's two ways to run, over one TopCollector (top/collector.h): frames (or JSON) printed
// on stdout for --once / --iterations / --json, and the live screen through ncurses
// (top/terminal.h), sampling on a fixed cadence (top/cadence.h) and answering keys between
// samples. SIGINT, SIGTERM and SIGHUP are read from a signalfd the key wait polls: the loop
// ends and the Terminal's destructor restores the screen; no signal handler runs curses code.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "top/collector.h"
#include "top/node_metrics.h"
#include "top/top_model.h"
#include "top/ui_state.h"

namespace headroom {

struct TopFlags {
  std::chrono::milliseconds interval{1000};
  std::optional<int64_t> iterations;  // batch mode
  bool json = false;
  bool no_color = false;
  SortOrder sort = SortOrder::kMemory;
};

// The frames of flags.iterations samples (1 by default), one per interval, as text or JSON.
int RunTopBatch(const CliEnv& env, TopCollector& collector, const TopFlags& flags,
                const std::string& host);
// --node: a node's /metrics is read within this time, up to this size (top/node_metrics.h).
inline constexpr std::chrono::milliseconds kNodeTimeout{2000};
inline constexpr size_t kNodePageBytes = size_t{4} << 20;
// The panes of other nodes' exporters (--node URL, each top/node_metrics.h ParseNodeUrl),
// flags.iterations frames, one per interval; a UsageError for a bad URL, --json, or no
// --once / --iterations (the live screen shows this machine only).
int RunTopNodes(const CliEnv& env, const std::vector<std::string>& node_flags,
                const TopFlags& flags);
// The live screen until q or a signal; a UsageError when the terminal cannot be opened.
int RunTopInteractive(TopCollector& collector, const TopFlags& flags, const std::string& host);

}  // namespace headroom
