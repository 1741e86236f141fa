#include "store/run_history.h"

#include <chrono>
#include <system_error>

#include "base/json_null.h"
#include "base/wall_time.h"

namespace headroom {

Result<std::vector<RunRow>> ReadRunHistory(const std::filesystem::path& path, int max_runs,
                                           std::string_view this_host,
                                           const ProcessAliveCheck& alive) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    if (ec) return Error{Msg("journal: stat({}): {}", path.string(), ErrnoArg{ec.value()})};
    return std::vector<RunRow>{};
  }
  auto journal = Journal::Open(path, JournalOptions{.read_only = true});
  if (!journal) return journal.error();
  auto runs = journal->RecentRuns(max_runs);
  if (runs && alive) MarkAbandonedRuns(*journal, *runs, this_host, alive);
  return runs;
}

std::optional<double> RunDurationSeconds(const RunRow& run) {
  if (!run.ended_at) return std::nullopt;
  const auto start = ParseUtcIso8601(run.started_at);
  const auto end = ParseUtcIso8601(*run.ended_at);
  if (!start || !end || *end < *start) return std::nullopt;
  return std::chrono::duration<double>(*end - *start).count();
}

namespace {

nlohmann::ordered_json RunJson(const RunRow& run) {
  using Json = nlohmann::ordered_json;  // keys in the order written: schema_version first
  Json summary = nullptr;
  if (run.summary_json) {
    summary = Json::parse(*run.summary_json, nullptr, false);
    if (summary.is_discarded()) summary = nullptr;
  }
  return {
      {"id", run.id},
      {"kind", run.kind},
      {"host", run.host},
      {"started_at", run.started_at},
      {"ended_at", OrNull(run.ended_at)},
      {"duration_s", OrNull(RunDurationSeconds(run))},
      {"status", run.status},
      {"exit_status", OrNull(run.exit_status)},
      {"command", run.command},
      {"summary", summary},
  };
}

}  // namespace

nlohmann::ordered_json RunHistoryJson(const std::filesystem::path& path,
                                      const std::vector<RunRow>& runs) {
  nlohmann::ordered_json out = {{"schema_version", kRunHistorySchemaVersion},
                                {"journal", path.string()}};
  out["runs"] = nlohmann::ordered_json::array();
  for (const RunRow& run : runs) out["runs"].push_back(RunJson(run));
  return out;
}

}  // namespace headroom
