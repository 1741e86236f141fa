// Pieces of the layout shared by top_view.cc (the readings) and top_view_panes.cc (the
// process table, the events, the help page). Internal to src/top/.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/wall_time.h"
#include "cli/top/top_view.h"
#include "top/frame.h"
#include "top/top_model.h"

namespace headroom::top_view {

// "14:03:07", local time.
std::string LocalClock(WallTime t);
// "115.23 GiB"; "-" when unknown.
std::string GiBOrDash(const std::optional<uint64_t>& bytes);
// A row with one text across it.
FrameRow TextRow(std::string_view text, Role role, const ViewOptions& o);

// The section title, the head and at most `max_rows` rows in all (batch: every holder).
std::vector<FrameRow> ProcessRows(const TopSnapshot& s, const UiState& ui, size_t max_rows,
                                  const ViewOptions& o);
// The title and the newest events, at most `max_rows` rows in all.
std::vector<FrameRow> EventRows(const TopSnapshot& s, size_t max_rows, const ViewOptions& o);
// The help page, at most `max_rows` rows.
std::vector<FrameRow> HelpRows(size_t max_rows, const ViewOptions& o);

}  // namespace headroom::top_view
