// Where the guard's events go (docs/guard.md, "Events"): JSON lines with wall and monotonic
// timestamps, or nowhere. Its own header so that what writes events (the guard loop, the
// checkpoint asker, the group's end) needs nothing else of the guard's.
#pragma once

#include <cstdio>
#include <nlohmann/json_fwd.hpp>
#include <string_view>

namespace headroom {

// A line is {"type":..,"wall_time":..,"monotonic_s":..} followed by `fields` in their order;
// strings, integers and booleans as nlohmann::json writes them, doubles (seconds) to the
// millisecond. Written in English.
class GuardEvents {
 public:
  explicit GuardEvents(std::FILE* file) : file_(file) {}
  void Emit(std::string_view type, const nlohmann::ordered_json& fields);
  // Flushes the file; the errno of the first write that failed (Emit's or this flush's), or
  // 0 when every event reached the kernel.
  int FlushAndFirstError();

 private:
  std::FILE* file_;
  int first_errno_ = 0;
};

}  // namespace headroom
