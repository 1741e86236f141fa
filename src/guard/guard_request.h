// `headroom guard`'s request (docs/guard.md): what its flags ask for, the levels already
// resolved by the caller (from the flags or the configuration), turned into the guard's
// options (guard/guard.h GuardOptions) and the run's beside them (guard/guarded_run.h). Errors
// are message values naming the flag; nothing here reads flags or the environment.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "guard/guard.h"
#include "guard/guard_group.h"
#include "guard/guard_record.h"
#include "guard/guarded_run.h"

namespace headroom {

// Where --torch-cap's hook goes: the caller's TMPDIR ("/tmp" when unset or empty) and the
// job's PYTHONPATH, which the hook's folder goes in front of.
struct TorchCapPlace {
  std::string tmp_dir;
  std::string pythonpath;
};

struct GuardRequest {
  std::vector<std::string> command;  // the job, after --; or
  std::string pid;                   // --pid's text: an existing process to guard
  uint64_t min_available_bytes = 0;  // the kill level
  uint64_t warn_available_bytes = 0;
  std::string grace = "3s";  // --grace's text; 0 is allowed (SIGKILL at once)
  bool psi_kill = false;
  bool use_cgroup = true;
  bool torch_cap = false;
  TorchCapPlace torch_cap_place;  // with torch_cap
  std::string events_path;
  // The companion (docs/companion.md, docs/guard.md "Checkpoint before the kill"): where its
  // step records go ("" for a private file removed after the run), whether to ask it for a
  // checkpoint, the signal (--checkpoint-signal's text: "SIGUSR1", "USR2", "12", "none"),
  // the time a save needs (--checkpoint-grace's text, "" for the measured one), --hooks, and
  // where the companion package is (for --hooks when it is not on the job's Python path).
  std::string step_records_path;
  bool checkpoint = true;
  std::string checkpoint_signal = "SIGUSR1";
  std::string checkpoint_grace;
  // With --pid (a job the user started with the companion's environment): the step records
  // are step_records_path, the HEADROOM_STEP_RECORDS it was started with ("" for none, and
  // then nothing can be asked), and --checkpoint-request's text its HEADROOM_CHECKPOINT_REQUEST
  // ("" for the signal only). Not for a job the guard starts: it names its own.
  std::string checkpoint_request_path;
  bool hooks = false;
  std::string companion_dir;
  // The journal: nullopt for --no-journal; else where it is (or why it could not be had).
  std::optional<Result<std::filesystem::path>> journal;
  GuardGroupRequest group;  // the group flags' text (guard/guard_group.h)
};

// The guard's options: the levels, --grace parsed, --pid a process id (1 to 2^22, the
// kernel's pid_max limit), and the checkpoint's: for --pid with its paths (the job's own
// records and request file), or with the reason nothing can be asked. An error names the flag.
Result<GuardOptions> GuardOptionsFor(const GuardRequest& request);

// The run's options around `guard`: --events, the journal and the command it records
// ("--pid PID" for an attached process), who guards, and the torch cap, which is the room
// above the kill level now (`available_bytes`) and applies only to a job the guard starts.
Result<GuardedRunOptions> GuardedRunFor(const GuardRequest& request, GuardOptions guard,
                                        uint64_t available_bytes, GuardStartRecord guard_start);

}  // namespace headroom
