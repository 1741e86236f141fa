// Implementation notes.
//  - Each field through nlohmann::json (strings escaped, invalid UTF-8 replaced), doubles as
//    seconds with three decimals and the timestamp with six, as they always were.
#include "guard/guard_events.h"

#include <fmt/format.h>
#include <time.h>

#include <cerrno>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "base/clock.h"
#include "base/wall_time.h"

namespace headroom {
namespace {

using EventJson = nlohmann::ordered_json;

std::string EventDump(const EventJson& j) {
  return j.dump(-1, ' ', false, EventJson::error_handler_t::replace);
}

}  // namespace

void GuardEvents::Emit(std::string_view type, const EventJson& fields) {
  if (!file_) return;
  std::string line = fmt::format(
      "{{\"type\":{},\"wall_time\":\"{}\",\"monotonic_s\":{:.6f}", EventDump(type),
      FormatUtcIso8601(std::chrono::system_clock::now()), ClockSeconds(CLOCK_MONOTONIC));
  for (const auto& [key, value] : fields.items()) {
    line += ',' + EventDump(key) + ':';
    line += value.is_number_float() ? fmt::format("{:.3f}", value.get<double>()) : EventDump(value);
  }
  line += "}\n";
  errno = 0;
  if ((std::fputs(line.c_str(), file_) < 0 || std::fflush(file_) != 0) && first_errno_ == 0) {
    first_errno_ = errno != 0 ? errno : EIO;
  }
}

int GuardEvents::FlushAndFirstError() {
  if (!file_) return 0;
  errno = 0;
  if (std::fflush(file_) != 0 && first_errno_ == 0) first_errno_ = errno != 0 ? errno : EIO;
  if (std::ferror(file_) && first_errno_ == 0) first_errno_ = EIO;
  return first_errno_;
}

}  // namespace headroom
