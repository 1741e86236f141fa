// Where `headroom guardian`'s events go besides the terminal (docs/guardian.md "Events"):
// the journal (a run of kind "guardian" whose events `history` lists, with the guard's start
// record so `top` shows its levels), the --events file (JSON lines, guard/guard_events.h)
// and the --on-event command (on_event.h). A write that fails is said once through `note`
// and the guardian goes on: a full disk must not stop the guard.
#pragma once

#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/message.h"
#include "guard/guard_events.h"
#include "guardian/guardian_loop.h"
#include "store/journal.h"
#include "store/recorded_run.h"
#include "sys/sysroot.h"

namespace headroom {

// Begins the guardian's run in `journal` with the guard's start record (guard/guard_record.h)
// and the guardian's levels, so that `top` lists it at once, and closes the journal again:
// `headroom guardian` calls it before it execs the worker. The run's id; 0, with `note` told,
// when the journal cannot be written.
int64_t BeginGuardianRun(const std::filesystem::path& journal,
                         const std::vector<std::string>& command, const SysRoot& real_root,
                         uint64_t kill_below_bytes, uint64_t warn_below_bytes,
                         const std::function<void(const Message&)>& note);

class GuardianRecord {
 public:
  using Note = std::function<void(const Message&)>;
  // `journal`: nullopt for --no-journal; `run_id`: BeginGuardianRun's (0: nothing goes to the
  // journal); `events`: an open stream or nullptr (not owned). The journal is opened at the
  // first event or at Finish, never before: a guardian with nothing to record touches none of
  // SQLite's code (docs/guardian.md "Its own memory").
  GuardianRecord(const std::optional<std::filesystem::path>& journal, int64_t run_id,
                 std::FILE* events, Note note);
  void Event(const GuardianEvent& event, double monotonic_s);
  // Closes the run with the counts as its summary.
  void Finish(const GuardianCounts& counts);
  int64_t run_id() const { return run_id_; }
  bool journal_open() const { return run_.has_value(); }

 private:
  void NoteOnce(const Message& m);
  RecordedRun* Run();  // the run, the journal opened on first use; nullptr when it cannot be
  std::optional<std::filesystem::path> journal_path_;
  int64_t run_id_ = 0;
  std::unique_ptr<Journal> journal_;
  std::optional<RecordedRun> run_;
  GuardEvents events_;
  bool have_events_ = false;
  Note note_;
  bool noted_journal_ = false;
  bool noted_events_ = false;
};

}  // namespace headroom
