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

#include "cli/cli.h"
#include "top/collector.h"
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
// The live screen until q or a signal; a UsageError when the terminal cannot be opened.
int RunTopInteractive(TopCollector& collector, const TopFlags& flags, const std::string& host);

}  // namespace headroom
