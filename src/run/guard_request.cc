#include "run/guard_request.h"

#include <utility>

#include "base/bytes.h"
#include "base/duration.h"

namespace headroom {

Result<GuardOptions> GuardOptionsFor(const GuardRequest& request) {
  GuardOptions opt;
  opt.min_available_bytes = request.min_available_bytes;
  opt.warn_available_bytes = request.warn_available_bytes;
  auto grace = ParseDuration(request.grace, /*allow_zero=*/true);
  if (!grace) return Error{MsgFrom("--grace: {}", grace.error().what)};
  opt.grace = std::chrono::duration_cast<std::chrono::milliseconds>(*grace);
  opt.psi_kill = request.psi_kill;
  opt.use_cgroup = request.use_cgroup;
  opt.command = request.command;
  if (!request.pid.empty()) {
    auto pid = ParsePositiveInt(request.pid);
    if (!pid || *pid > (1 << 22)) return Error{Msg("--pid: '{}' is not a process id", request.pid)};
    opt.attach_pid = static_cast<pid_t>(*pid);
  }
  return opt;
}

Result<GuardedRunOptions> GuardedRunFor(const GuardRequest& request, GuardOptions guard,
                                        uint64_t available_bytes, GuardStartRecord guard_start) {
  GuardedRunOptions o;
  if (request.torch_cap) {
    const TorchCapPlace& place = request.torch_cap_place;
    if (guard.attach_pid)
      return Error{Msg("--torch-cap: applies to a job started by the guard, not --pid")};
    o.torch_cap = GuardedRunOptions::TorchCapRequest{
        available_bytes > guard.min_available_bytes ? available_bytes - guard.min_available_bytes
                                                    : 0,
        place.tmp_dir.empty() ? "/tmp" : place.tmp_dir, place.pythonpath};
  }
  o.events_path = request.events_path;
  o.journal = request.journal;
  o.recorded_command =
      request.command.empty() ? std::vector<std::string>{"--pid", request.pid} : request.command;
  o.guard_start = std::move(guard_start);
  o.guard = std::move(guard);
  return o;
}

}  // namespace headroom
