// `headroom history`'s data: the journal's recent runs, newest first, and their JSON form
// (schema_version 1, docs/journal.md). It only reads: a journal that does not exist yet
// means nothing was recorded, and it is not created just to be listed.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "store/abandoned_runs.h"
#include "store/journal.h"

namespace headroom {

inline constexpr int kRunHistorySchemaVersion = 1;

// At most `max_runs` (>= 1) runs of the journal at `path`, newest first; none when the
// file does not exist (it is not created). An error when it cannot be stat'ed or read. With
// `alive`, a "running" run whose recorder on `this_host` is gone reads as abandoned
// (store/abandoned_runs.h).
Result<std::vector<RunRow>> ReadRunHistory(const std::filesystem::path& path, int max_runs,
                                           std::string_view this_host = {},
                                           const ProcessAliveCheck& alive = nullptr);

// Seconds from start to end; nullopt while running, or when either time does not parse or
// the end is before the start (a clock set back, a hand edit).
std::optional<double> RunDurationSeconds(const RunRow& run);

// {"schema_version": 1, "journal": PATH, "runs": [{"id", "kind", "host", "started_at",
// "ended_at", "duration_s", "status", "exit_status", "command", "summary"}, ...]}, keys in
// that order. The stored summary is embedded as an object; text that no longer parses
// (edited by hand) is null rather than failing the list.
nlohmann::ordered_json RunHistoryJson(const std::filesystem::path& path,
                                      const std::vector<RunRow>& runs);

}  // namespace headroom
