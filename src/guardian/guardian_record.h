// Where `headroom guardian`'s events go besides the terminal (docs/guardian.md "Events"):
// the journal (a run of kind "guardian" whose events `history` lists, with the guard's start
// record so `top` shows its levels), the --events file (JSON lines, guard/guard_events.h)
// and the --on-event command (on_event.h). A write that fails is said once through `note`
// and the guardian goes on: a full disk must not stop the guard.
#pragma once

#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/message.h"
#include "guard/guard_events.h"
#include "guardian/guardian_loop.h"
#include "store/recorded_run.h"
#include "sys/sysroot.h"

namespace headroom {

class GuardianRecord {
 public:
  using Note = std::function<void(const Message&)>;
  // `journal`: nullopt for --no-journal; `events`: an open stream or nullptr (not owned).
  GuardianRecord(const std::optional<std::filesystem::path>& journal,
                 const std::vector<std::string>& command, std::FILE* events, Note note);
  // The start record (guard/guard_record.h) with the guardian's levels.
  void Start(const SysRoot& real_root, uint64_t kill_below_bytes, uint64_t warn_below_bytes);
  void Event(const GuardianEvent& event, double monotonic_s);
  // Closes the run with the counts as its summary.
  void Finish(const GuardianCounts& counts);
  int64_t run_id() const { return run_ ? run_->id() : 0; }

 private:
  void NoteOnce(const Message& m);
  std::optional<RecordedRun> run_;
  GuardEvents events_;
  bool have_events_ = false;
  Note note_;
  bool noted_journal_ = false;
  bool noted_events_ = false;
};

}  // namespace headroom
