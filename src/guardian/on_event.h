// --on-event CMD: each event of `headroom guardian` runs `sh -c CMD` with the event in its
// environment (HEADROOM_EVENT_TYPE, HEADROOM_EVENT_MESSAGE, and one HEADROOM_EVENT_<FIELD>
// per field: HEADROOM_EVENT_AVAILABLE_BYTES, HEADROOM_EVENT_VICTIM_PID, ...), so a user can
// send it anywhere (mail, a chat hook, logger). The command never holds the loop up: it is
// started in its own process group, reaped when it ends, and killed (the whole group) once
// it has run `limit`; at most kMaxRunning run at once, and an event beyond them is dropped
// with a note.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "guardian/guardian_loop.h"

namespace headroom {

// The environment entries ("NAME=value") of an event, in a stable order.
std::vector<std::string> EventEnvironment(const GuardianEvent& event);

class OnEventRunner {
 public:
  static constexpr size_t kMaxRunning = 4;
  OnEventRunner(std::string command, std::chrono::milliseconds limit);
  ~OnEventRunner();  // kills and reaps what still runs
  OnEventRunner(const OnEventRunner&) = delete;
  OnEventRunner& operator=(const OnEventRunner&) = delete;

  // Starts the command for `event`; false when it could not (fork failed, too many running).
  bool Start(const GuardianEvent& event, double now_s);
  // Reaps those that ended and kills those past the limit; how many still run.
  size_t Poll(double now_s);

 private:
  std::string command_;
  double limit_s_;
  std::map<pid_t, double> running_;  // pid (= its process group) -> start
};

}  // namespace headroom
