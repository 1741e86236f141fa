// Implementation notes. RunningRuns(kRunsScanned) reads only the runs still "running",
// however many finished runs are newer (a long training job's guard, behind a day of sweeps
// and watch runs). It bounds the read at the newest 200 of those: runs whose process died by
// SIGKILL or a power cut stay "running" for ever, and each costs an events query and a
// liveness check. The read is one query (a scan of runs: it has no index on status, and
// holds a row per command run, thousands, not millions) plus one per running run, well under
// a millisecond on a journal of thousands of runs (bench/top_cost.py measures top as a whole).
#include "top/running_guards.h"

#include "base/message.h"
#include "guard/guard_record.h"
#include "sys/processes.h"

namespace headroom {
namespace {

constexpr int kRunsScanned = 200;

}  // namespace

std::vector<RunningGuard> FindRunningGuards(
    const std::vector<RunRow>& runs,
    const std::function<std::vector<EventRow>(int64_t run_id)>& events_of, std::string_view host,
    const GuardAliveCheck& alive) {
  std::vector<RunningGuard> out;
  for (const RunRow& run : runs) {
    // Any kind of run may guard (guard, watch --guard, sweep): the record says it does.
    if (run.status != "running") continue;
    // The newest record: a resumed sweep writes another, from its new process.
    std::optional<GuardStartRecord> record;
    for (const EventRow& e : events_of(run.id)) {
      if (e.type != kGuardStartEvent) continue;
      if (auto parsed = ParseGuardStartJson(e.data_json)) record = std::move(parsed);
    }
    // A run from a headroom that wrote no record: its levels are not known until it ends.
    if (!record) continue;
    if (!record->host.empty() && !host.empty() && record->host != host) continue;
    if (!alive(record->guard_pid, record->guard_start_ticks)) continue;
    RunningGuard g;
    g.run_id = run.id;
    g.kind = run.kind;
    g.guard_pid = record->guard_pid;
    g.kill_below_bytes = record->kill_below_bytes;
    g.warn_below_bytes = record->warn_below_bytes;
    g.started_at = run.started_at;
    g.command = run.command;
    g.step_records = record->step_records;
    out.push_back(std::move(g));
  }
  return out;
}

bool GuardProcessAlive(const SysRoot& root, pid_t pid, std::optional<uint64_t> start_ticks) {
  const auto stat = ReadProcStat(root, pid);
  if (!stat || stat->state == 'Z' || stat->state == 'X') return false;
  return !start_ticks || stat->starttime_ticks == *start_ticks;
}

RunningGuardReader::RunningGuardReader(std::filesystem::path journal_path, SysRoot root,
                                       std::string host)
    : path_(std::move(journal_path)), root_(std::move(root)), host_(std::move(host)) {}

std::vector<RunningGuard> RunningGuardReader::Read(std::string& note) {
  note.clear();
  if (!journal_) {
    std::error_code ec;
    if (!std::filesystem::exists(path_, ec)) return {};
    auto opened = Journal::Open(
        path_, JournalOptions{.read_only = true, .busy_timeout = std::chrono::milliseconds(200)});
    if (!opened) {
      note = EnglishText(opened.error().what);
      return {};
    }
    // A file another process is creating has no schema yet: read as empty, opened again
    // next time (the schema version is read once per connection).
    if (opened->schema_version() == 0) return {};
    journal_.emplace(std::move(*opened));
  }
  auto runs = journal_->RunningRuns(kRunsScanned);
  if (!runs) {
    note = EnglishText(runs.error().what);
    journal_.reset();  // reopened on the next read: the file may have been replaced
    return {};
  }
  const auto events_of = [&](int64_t id) {
    auto events = journal_->Events(id);
    return events ? std::move(*events) : std::vector<EventRow>{};
  };
  const auto alive = [&](pid_t pid, std::optional<uint64_t> ticks) {
    return GuardProcessAlive(root_, pid, ticks);
  };
  return FindRunningGuards(*runs, events_of, host_, alive);
}

}  // namespace headroom
