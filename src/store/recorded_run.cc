// The recorded run: a journal row begun, added to and finished through one object.
//
// Implementation notes.
//  - The journal is held by pointer, owned (Open) or borrowed (Begin, Reopen): a moved run
//    keeps pointing at the same Journal, which an owned one keeps on the heap for that.
//  - Finish is once only, so a caller's error path and its normal path cannot both close
//    the row (the first status stays, as the journal's readers expect).
#include "store/recorded_run.h"

#include <utility>

namespace headroom {

Result<RecordedRun> RecordedRun::Open(const std::filesystem::path& path, RunKind kind,
                                      const std::vector<std::string>& command,
                                      std::string_view sweep_key) {
  auto opened = Journal::Open(path);
  if (!opened) return opened.error();
  auto owned = std::make_unique<Journal>(std::move(*opened));
  auto id = owned->BeginRun(kind, command, std::chrono::system_clock::now(), "", sweep_key);
  if (!id) return id.error();
  Journal& journal = *owned;
  return RecordedRun(std::move(owned), journal, *id);
}

Result<RecordedRun> RecordedRun::Begin(Journal& journal, RunKind kind,
                                       const std::vector<std::string>& command,
                                       std::string_view sweep_key) {
  auto id = journal.BeginRun(kind, command, std::chrono::system_clock::now(), "", sweep_key);
  if (!id) return id.error();
  return RecordedRun(nullptr, journal, *id);
}

Result<RecordedRun> RecordedRun::Reopen(Journal& journal, int64_t run_id) {
  auto reopened = journal.ReopenRun(run_id);
  if (!reopened) return reopened.error();
  return RecordedRun(nullptr, journal, run_id);
}

Result<int64_t> RecordedRun::AddEvent(std::string_view type, std::string_view data_json,
                                      double monotonic_s, WallTime wall_time) {
  return journal_->AddEvent(run_id_, type, monotonic_s, wall_time, data_json);
}

Result<int64_t> RecordedRun::AddTrial(const Trial& trial) {
  return journal_->AddTrial(run_id_, trial);
}

Result<bool> RecordedRun::Finish(std::string_view status, int exit_status,
                                 std::string_view summary_json, const std::vector<Message>& notes,
                                 WallTime ended_at) {
  if (finished_) return false;
  auto done = journal_->FinishRun(run_id_, status, exit_status, summary_json, ended_at, notes);
  if (done) finished_ = true;
  return done;
}

}  // namespace headroom
