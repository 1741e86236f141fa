// guard's run: the cap, the events file and the journal's record around RunGuard.
//
// Implementation notes.
//  - The order is the one `headroom guard` always had: the cap, then the events file (both
//    a usage error when they fail, before anything is recorded), then the journal, whose
//    failure is only a note.
//  - The events file and the cap are released on every path (Scoped below).
#include "guard/guarded_run.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "base/exit_status.h"
#include "base/message.h"
#include "base/safe_file.h"
#include "guard/torch_cap.h"
#include "store/recorded_run.h"

namespace headroom {
namespace {

// The events file and the cap, closed and removed when the run ends.
struct Scoped {
  std::FILE* events = nullptr;
  std::optional<TorchCap> cap;
  std::string companion_dir;  // the companion's private folder
  std::string step_records;   // the records the job writes, "" when none
  Scoped() = default;
  Scoped(const Scoped&) = delete;
  Scoped& operator=(const Scoped&) = delete;
  ~Scoped() {
    if (events) std::fclose(events);
    if (cap) cap->Remove();
    std::error_code ec;
    if (!companion_dir.empty()) std::filesystem::remove_all(companion_dir, ec);
  }
};

// The companion's environment (docs/companion.md) and the checkpoint's paths: a private
// folder for the request file and, unless the user named the records, the records.
Result<std::vector<std::string>> SetUpCompanion(const GuardedRunOptions::CompanionRequest& c,
                                                GuardOptions& guard, Scoped& scoped) {
  std::string templ = c.tmp_dir + "/headroom-companion-XXXXXX";
  if (!::mkdtemp(templ.data())) return ErrnoError("companion: mkdtemp(" + templ + ")");
  scoped.companion_dir = templ;
  const std::string records = c.step_records.empty() ? templ + "/steps.jsonl" : c.step_records;
  const std::string request = templ + "/save-request";
  scoped.step_records = records;
  std::vector<std::string> env = {"HEADROOM_STEP_RECORDS=" + records,
                                  "HEADROOM_CHECKPOINT_REQUEST=" + request};
  if (guard.checkpoint) {
    guard.checkpoint->records_path = records;
    guard.checkpoint->request_path = request;
    env.push_back(guard.checkpoint->signal == 0
                      ? std::string("HEADROOM_CHECKPOINT_SIGNAL=none")
                      : fmt::format("HEADROOM_CHECKPOINT_SIGNAL={}", guard.checkpoint->signal));
  } else {
    env.push_back("HEADROOM_CHECKPOINT_SIGNAL=none");  // nobody will ask
  }
  if (c.hooks) {
    env.push_back("HEADROOM_HOOKS=1");
    if (!c.companion_dir.empty()) env.push_back("HEADROOM_COMPANION_DIR=" + c.companion_dir);
  }
  return env;
}

// The run begun in the journal, with the guard's record; an error is kept as the note.
std::optional<RecordedRun> Record(const GuardedRunOptions& o, const GuardStartRecord& start,
                                  std::optional<Error>& failed) {
  if (!o.journal) return std::nullopt;
  if (!*o.journal) {
    failed = o.journal->error();
    return std::nullopt;
  }
  auto begun = RecordedRun::Open(**o.journal, RunKind::kGuard, o.recorded_command);
  if (!begun) {
    failed = begun.error();
    return std::nullopt;
  }
  // Who guards, where, at which levels: what `headroom top` shows while the run lasts.
  if (auto added = RecordGuardStart(*begun, start); !added) failed = added.error();
  return std::move(*begun);
}

}  // namespace

void NoteLostEvents(GuardEvents& events, const std::string& path, GuardSummary& summary) {
  const int error = events.FlushAndFirstError();
  if (error == 0) return;
  summary.notes.push_back(
      Msg("--events: {}: an event could not be written: {}", path, ErrnoArg{error}));
  // Never silence: the job's own failure stays what it was, a success becomes a failure.
  if (summary.exit_status == kExitOk) summary.exit_status = kExitUsage;
}

Result<GuardSummary> RunGuardedJob(const SysRoot& root, const GuardedRunOptions& o,
                                   const GuardSay& say) {
  Scoped scoped;
  GuardOptions guard = o.guard;
  if (o.torch_cap || (o.companion && o.companion->hooks)) {
    // One sitecustomize for both (guard/torch_cap.h); --hooks alone sets no cap.
    auto installed =
        o.torch_cap
            ? InstallTorchCap(o.torch_cap->tmp_dir, o.torch_cap->cap_bytes, o.torch_cap->pythonpath)
            : InstallTorchCap(o.companion->tmp_dir, 0, o.companion->pythonpath);
    if (!installed) return installed.error();
    scoped.cap = std::move(*installed);
    guard.extra_env = scoped.cap->env;
  }
  if (o.companion) {
    auto env = SetUpCompanion(*o.companion, guard, scoped);
    if (!env) return env.error();
    guard.extra_env.insert(guard.extra_env.end(), env->begin(), env->end());
  }
  // Else (--pid) the checkpoint's paths are the job's own, from the request (or it says why
  // nothing can be asked): guard/guard_request.h.
  if (!o.events_path.empty()) {
    // A regular file or nothing, never through a symbolic link (base/safe_file.h).
    auto opened = OpenAppendStream(o.events_path);
    if (!opened && opened.error().errno_value != 0)
      return Error{
          Msg("--events: cannot open {}: {}", o.events_path, ErrnoArg{opened.error().errno_value})};
    if (!opened) return InContext("--events", opened.error());
    scoped.events = *opened;
  }
  std::optional<Error> journal_error;
  // The step records too (set up above, or --pid's own): `headroom export` counts the steps.
  GuardStartRecord start = o.guard_start;
  start.step_records = guard.checkpoint && !guard.checkpoint->records_path.empty()
                           ? guard.checkpoint->records_path
                           : scoped.step_records;
  auto record = Record(o, start, journal_error);
  GuardEvents events(scoped.events);
  auto summary = RunGuard(root, guard, events, say);
  if (!summary) {
    if (record) (void)record->Finish("error", kExitUsage, "");
    return summary;
  }
  NoteLostEvents(events, o.events_path, *summary);  // before the status is recorded
  if (record) {
    auto done = record->Finish(
        summary->killed ? "killed-by-guard" : "exited", summary->exit_status,
        GuardSummaryJson(*summary, guard.min_available_bytes, guard.warn_available_bytes).dump(),
        summary->notes);
    if (!done) journal_error = done.error();
  }
  // Not in the journal, by definition: the note goes to --json's notes and the screen.
  if (journal_error)
    summary->notes.push_back(Msg("not recorded in the journal: {}", journal_error->what));
  return summary;
}

}  // namespace headroom
