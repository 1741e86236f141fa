// One run in the journal, recorded the one way guard, watch and sweep record theirs: begun
// (a new row with its kind and command, status "running") or reopened (a resumed sweep),
// events and trials added while it lasts, finished once with its status, exit status and
// summary (docs/journal.md has the rows).
//
// A run that is never finished (an error before the end, a SIGKILL, a power cut) stays
// "running" in the journal: the destructor writes nothing, which is the journal's rule for
// a run cut off (`history` shows it as under way or ended without a word,
// Journal::RunningRuns lists it).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/wall_time.h"
#include "store/journal.h"

namespace headroom {

class RecordedRun {
 public:
  // Opens the journal at `path` (creating and migrating it, Journal::Open) and begins a run
  // there; the run owns the journal.
  static Result<RecordedRun> Open(const std::filesystem::path& path, RunKind kind,
                                  const std::vector<std::string>& command,
                                  std::string_view sweep_key = "");
  // Begins a run in `journal`, which must outlive the run.
  static Result<RecordedRun> Begin(Journal& journal, RunKind kind,
                                   const std::vector<std::string>& command,
                                   std::string_view sweep_key = "");
  // Reopens run `run_id` of `journal` (status "running" again), for a resumed sweep.
  static Result<RecordedRun> Reopen(Journal& journal, int64_t run_id);

  RecordedRun(RecordedRun&&) noexcept = default;
  RecordedRun& operator=(RecordedRun&&) noexcept = default;
  RecordedRun(const RecordedRun&) = delete;
  RecordedRun& operator=(const RecordedRun&) = delete;
  ~RecordedRun() = default;  // an unfinished run stays "running" (see above)

  int64_t id() const { return run_id_; }
  Journal& journal() const { return *journal_; }
  bool finished() const { return finished_; }

  // An event of the run; `data_json` a JSON object. `monotonic_s`: the recorder's monotonic
  // clock in seconds, 0 for an event stamped by its wall time only (watch's "files").
  Result<int64_t> AddEvent(std::string_view type, std::string_view data_json,
                           double monotonic_s = 0,
                           WallTime wall_time = std::chrono::system_clock::now());
  Result<int64_t> AddTrial(const Trial& trial);
  // Closes the run (once; a second call changes nothing and answers false). `summary_json`:
  // a JSON object, or "" for none; `notes` stored as messages (Journal::FinishRun).
  Result<bool> Finish(std::string_view status, int exit_status, std::string_view summary_json,
                      const std::vector<Message>& notes = {},
                      WallTime ended_at = std::chrono::system_clock::now());

 private:
  RecordedRun(std::unique_ptr<Journal> owned, Journal& journal, int64_t run_id)
      : owned_(std::move(owned)), journal_(&journal), run_id_(run_id) {}

  std::unique_ptr<Journal> owned_;  // set by Open only
  Journal* journal_ = nullptr;
  int64_t run_id_ = 0;
  bool finished_ = false;
};

}  // namespace headroom
