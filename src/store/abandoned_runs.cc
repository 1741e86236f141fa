#include "store/abandoned_runs.h"

#include <nlohmann/json.hpp>

#include "sys/processes.h"

namespace headroom {

std::optional<RunOwner> ParseRunOwner(std::string_view start_data_json) {
  const auto j = nlohmann::json::parse(start_data_json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  const auto pid = j.find("guard_pid");
  if (pid == j.end() || !pid->is_number_integer() || pid->get<int64_t>() <= 0 ||
      pid->get<int64_t>() > (1 << 22)) {
    return std::nullopt;
  }
  RunOwner owner;
  owner.pid = static_cast<pid_t>(pid->get<int64_t>());
  if (const auto t = j.find("guard_start_ticks"); t != j.end() && t->is_number_unsigned()) {
    owner.start_ticks = t->get<uint64_t>();
  }
  if (const auto h = j.find("host"); h != j.end() && h->is_string()) {
    owner.host = h->get<std::string>();
  }
  return owner;
}

bool ProcessAlive(const SysRoot& root, pid_t pid, std::optional<uint64_t> start_ticks) {
  const auto stat = ReadProcStat(root, pid);
  if (!stat || stat->state == 'Z' || stat->state == 'X') return false;
  return !start_ticks || stat->starttime_ticks == *start_ticks;
}

std::string ShownRunStatus(const RunRow& run, const std::vector<EventRow>& events,
                           std::string_view this_host, const ProcessAliveCheck& alive) {
  if (run.status != "running") return run.status;
  // The newest record: a resumed sweep writes another, from its new process.
  std::optional<RunOwner> owner;
  for (const EventRow& e : events) {
    if (e.type != "start") continue;
    if (auto parsed = ParseRunOwner(e.data_json)) owner = std::move(parsed);
  }
  if (!owner) return run.status;
  // Another machine's run (a journal in a shared home directory): its process is not ours
  // to look up.
  if (!owner->host.empty() && !this_host.empty() && owner->host != this_host) return run.status;
  return alive(owner->pid, owner->start_ticks) ? run.status : std::string(kAbandonedStatus);
}

void MarkAbandonedRuns(Journal& journal, std::vector<RunRow>& runs, std::string_view this_host,
                       const ProcessAliveCheck& alive) {
  for (RunRow& run : runs) {
    if (run.status != "running") continue;
    auto events = journal.Events(run.id);
    if (events) run.status = ShownRunStatus(run, *events, this_host, alive);
  }
}

}  // namespace headroom
