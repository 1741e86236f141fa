#include "guard/guard_request.h"

#include <csignal>
#include <cstring>
#include <utility>

#include "base/bytes.h"
#include "base/duration.h"

namespace headroom {
namespace {

// --checkpoint-signal: "SIGUSR1", "USR1", a number 1-64, or "none" (0: the request file only).
Result<int> CheckpointSignal(const std::string& text) {
  if (text == "none") return 0;
  if (auto n = ParsePositiveInt(text); n && *n <= 64) return static_cast<int>(*n);
  std::string name = text.starts_with("SIG") ? text.substr(3) : text;
  for (int sig = 1; sig < 65; ++sig) {
    const char* abbrev = ::sigabbrev_np(sig);
    if (abbrev && name == abbrev) {
      if (sig == SIGKILL || sig == SIGSTOP) break;
      return sig;
    }
  }
  return Error{Msg("--checkpoint-signal: '{}' is not a signal name or number (or none)", text)};
}

}  // namespace

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
  if (!request.checkpoint_request_path.empty() && request.pid.empty()) {
    return Error{
        Msg("--checkpoint-request: applies to --pid (a job the guard starts gets its own)")};
  }
  if (request.checkpoint) {
    CheckpointOptions cp;
    auto sig = CheckpointSignal(request.checkpoint_signal);
    if (!sig) return sig.error();
    cp.signal = *sig;
    if (!request.checkpoint_grace.empty()) {
      auto need = ParseDuration(request.checkpoint_grace, /*allow_zero=*/true);
      if (!need) return Error{MsgFrom("--checkpoint-grace: {}", need.error().what)};
      cp.grace = std::chrono::duration_cast<std::chrono::milliseconds>(*need);
    }
    if (opt.attach_pid) {
      // The job's own environment, which the user set when starting it (docs/guard.md,
      // "A job attached with --pid"): the guard cannot set an existing process's.
      cp.records_path = request.step_records_path;
      cp.request_path = request.checkpoint_request_path;
      if (cp.records_path.empty()) {
        cp.unavailable =
            Msg("no step records: give --step-records FILE, the HEADROOM_STEP_RECORDS the job "
                "was started with");
      } else if (cp.signal == 0 && cp.request_path.empty()) {
        return Error{
            Msg("--checkpoint-signal none: with --pid the save can then be asked only "
                "through the request file: give --checkpoint-request FILE")};
      }
    }
    // A job the guard starts: the paths come with the run (guard/guarded_run.h).
    opt.checkpoint = std::move(cp);
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
  if (guard.attach_pid && request.hooks) {
    // A sitecustomize acts at the interpreter's start, which an attached job is past.
    return Error{Msg("--hooks: applies to a job started by the guard, not --pid")};
  }
  if (!guard.attach_pid) {
    o.companion = GuardedRunOptions::CompanionRequest{
        request.torch_cap_place.tmp_dir.empty() ? "/tmp" : request.torch_cap_place.tmp_dir,
        request.step_records_path, request.hooks, request.companion_dir,
        request.torch_cap_place.pythonpath};
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
