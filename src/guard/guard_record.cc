// Implementation notes. The record is written once per run, as it begins, so its cost does
// not matter; what matters is that a reader never mistakes something else for it: every
// field is checked for its type, and a record without a pid or levels is no record (an
// older headroom's run, or another program's event of the same name).
#include "guard/guard_record.h"

#include <time.h>
#include <unistd.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "base/clock.h"
#include "sys/processes.h"

namespace headroom {

std::string GuardStartJson(const GuardStartRecord& r) {
  nlohmann::json j = {
      {"guard_pid", r.guard_pid},
      {"guard_start_ticks",
       r.guard_start_ticks ? nlohmann::json(*r.guard_start_ticks) : nlohmann::json(nullptr)},
      {"host", r.host},
      {"kill_below_bytes", r.kill_below_bytes},
      {"warn_below_bytes", r.warn_below_bytes},
  };
  if (!r.step_records.empty()) j["step_records"] = r.step_records;
  // replace: a host name need not be UTF-8.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<GuardStartRecord> ParseGuardStartJson(std::string_view data_json) {
  const auto j = nlohmann::json::parse(data_json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  const auto unsigned_field = [&](const char* key) -> std::optional<uint64_t> {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number_unsigned()) return std::nullopt;
    return it->get<uint64_t>();
  };
  const auto pid = unsigned_field("guard_pid");
  const auto kill = unsigned_field("kill_below_bytes");
  const auto warn = unsigned_field("warn_below_bytes");
  if (!pid || *pid == 0 || *pid > static_cast<uint64_t>(std::numeric_limits<pid_t>::max()) ||
      !kill || !warn) {
    return std::nullopt;
  }
  GuardStartRecord r;
  r.guard_pid = static_cast<pid_t>(*pid);
  r.kill_below_bytes = *kill;
  r.warn_below_bytes = *warn;
  r.guard_start_ticks = unsigned_field("guard_start_ticks");
  if (const auto host = j.find("host"); host != j.end() && host->is_string())
    r.host = host->get<std::string>();
  if (const auto records = j.find("step_records"); records != j.end() && records->is_string())
    r.step_records = records->get<std::string>();
  return r;
}

std::string LocalHostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return {};
  return name;
}

GuardStartRecord ThisGuardStart(const SysRoot& real_root, uint64_t kill_below_bytes,
                                uint64_t warn_below_bytes) {
  GuardStartRecord r{::getpid(),       std::nullopt,     LocalHostName(),
                     kill_below_bytes, warn_below_bytes, ""};
  if (auto self = ReadProcStat(real_root, r.guard_pid)) r.guard_start_ticks = self->starttime_ticks;
  return r;
}

Result<int64_t> RecordGuardStart(RecordedRun& run, const GuardStartRecord& record) {
  return run.AddEvent(kGuardStartEvent, GuardStartJson(record), ClockSeconds(CLOCK_MONOTONIC));
}

}  // namespace headroom
