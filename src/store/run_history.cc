#include "store/run_history.h"

#include <chrono>
#include <system_error>

#include "base/json_null.h"
#include "base/wall_time.h"

namespace headroom {

namespace {

// How many of a guardian run's events history shows under it, the newest.
constexpr size_t kGuardianEventsShown = 10;

// `headroom guardian`'s warnings, kills and decisions are events of its run (docs/guardian.md
// "Events"), written in English with their one line in "message": shown as the run's notes.
void AddGuardianEvents(Journal& journal, RunRow& run) {
  auto events = journal.Events(run.id);
  if (!events) return;
  std::vector<Message> shown;
  for (const EventRow& e : *events) {
    if (e.type == "start") continue;
    const auto data = nlohmann::json::parse(e.data_json, nullptr, false);
    const auto message = data.is_object() ? data.find("message") : data.end();
    if (message == data.end() || !message->is_string()) continue;
    shown.push_back(
        Message::Literal(e.wall_time + " " + e.type + ": " + message->get<std::string>()));
  }
  const size_t from = shown.size() > kGuardianEventsShown ? shown.size() - kGuardianEventsShown : 0;
  run.notes.insert(run.notes.end(), shown.begin() + static_cast<std::ptrdiff_t>(from), shown.end());
}

}  // namespace

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
  if (runs) {
    for (RunRow& run : *runs) {
      if (run.kind == RunKindName(RunKind::kGuardian)) AddGuardianEvents(*journal, run);
    }
  }
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
