// `headroom guard`'s run, around RunGuard: the torch cap installed (and removed after),
// the --events file opened, the run recorded in the journal (a RecordedRun with the guard's
// "start" record, finished with the summary; status "error" when RunGuard fails). A journal
// that cannot be opened or written is a note in the summary, never a reason to leave the
// job unguarded. Nothing here prints or reads the environment: the CLI passes the values.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "guard/guard.h"
#include "guard/guard_record.h"
#include "sys/sysroot.h"

namespace headroom {

struct GuardedRunOptions {
  GuardOptions guard;
  std::string events_path;  // --events: JSON lines appended ("" for none)
  // --torch-cap: the allocator's cap and where the hook goes (guard/torch_cap.h).
  struct TorchCapRequest {
    uint64_t cap_bytes = 0;
    std::string tmp_dir;
    std::string pythonpath;  // the job's PYTHONPATH, may be empty
  };
  std::optional<TorchCapRequest> torch_cap;
  // The companion's environment for a job the guard starts (docs/companion.md): a private
  // folder (mkdtemp under tmp_dir, removed after) holding the request file and, unless
  // step_records names one, the step records; with hooks, the sitecustomize that wires the
  // companion in (guard/torch_cap.h, shared with --torch-cap).
  struct CompanionRequest {
    std::string tmp_dir;
    std::string step_records;  // "" for the private folder's steps.jsonl
    bool hooks = false;
    std::string companion_dir;  // where python/headroom is, for the hooks ("" unknown)
    std::string pythonpath;     // the job's PYTHONPATH, may be empty
  };
  std::optional<CompanionRequest> companion;
  // The journal: nullopt for --no-journal; else where it is (or why it could not be had).
  std::optional<Result<std::filesystem::path>> journal;
  std::vector<std::string> recorded_command;  // the run's command row
  GuardStartRecord guard_start;               // who guards (guard/guard_record.h)
};

// After the run: when a write to the events stream `events` failed (a full disk), a note in
// `summary` naming `path`, and a success turned into kExitUsage (never silence). Nothing for
// a null stream.
void NoteLostEvents(GuardEvents& events, const std::string& path, GuardSummary& summary);

// Runs the guard with all of the above. Errors (exit 2): the torch cap or the events file
// could not be set up, or RunGuard's own.
Result<GuardSummary> RunGuardedJob(const SysRoot& root, const GuardedRunOptions& options,
                                   const GuardSay& say);

}  // namespace headroom
