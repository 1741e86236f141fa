#include "guardian/guardian_record.h"

#include "guard/guard_record.h"

namespace headroom {

int64_t BeginGuardianRun(const std::filesystem::path& journal,
                         const std::vector<std::string>& command, const SysRoot& real_root,
                         uint64_t kill_below, uint64_t warn_below,
                         const std::function<void(const Message&)>& note) {
  auto begun = RecordedRun::Open(journal, RunKind::kGuardian, command);
  if (!begun) {
    if (note) note(begun.error().what);
    return 0;
  }
  if (auto added = RecordGuardStart(*begun, ThisGuardStart(real_root, kill_below, warn_below));
      !added) {
    if (note) note(added.error().what);
  }
  return begun->id();  // the run stays "running" when the journal closes (recorded_run.h)
}

GuardianRecord::GuardianRecord(const std::optional<std::filesystem::path>& journal, int64_t run_id,
                               std::FILE* events, Note note)
    : journal_path_(journal),
      run_id_(run_id),
      events_(events),
      have_events_(events != nullptr),
      note_(std::move(note)) {}

void GuardianRecord::NoteOnce(const Message& m) {
  if (note_) note_(m);
}

RecordedRun* GuardianRecord::Run() {
  if (run_) return &*run_;
  if (!journal_path_ || run_id_ == 0 || noted_journal_) return nullptr;
  auto opened = Journal::Open(*journal_path_);
  if (!opened) {
    noted_journal_ = true;
    NoteOnce(opened.error().what);
    return nullptr;
  }
  journal_ = std::make_unique<Journal>(std::move(*opened));
  auto reopened = RecordedRun::Reopen(*journal_, run_id_);
  if (!reopened) {
    noted_journal_ = true;
    NoteOnce(reopened.error().what);
    return nullptr;
  }
  run_.emplace(std::move(*reopened));
  return &*run_;
}

void GuardianRecord::Event(const GuardianEvent& event, double monotonic_s) {
  nlohmann::ordered_json fields = event.fields;
  fields["message"] = EnglishText(event.line);
  if (RecordedRun* run = Run()) {
    if (auto added = run->AddEvent(event.type, fields.dump(), monotonic_s);
        !added && !noted_journal_) {
      noted_journal_ = true;
      NoteOnce(added.error().what);
    }
  }
  if (have_events_) {
    events_.Emit(event.type, fields);
    if (const int e = events_.FlushAndFirstError(); e != 0 && !noted_events_) {
      noted_events_ = true;
      NoteOnce(Msg("guardian: write(--events): {}", ErrnoArg{e}));
    }
  }
}

void GuardianRecord::Finish(const GuardianCounts& c) {
  RecordedRun* run = Run();
  if (run == nullptr) return;
  const nlohmann::ordered_json summary{
      {"kills", c.kills},         {"escalations", c.escalations}, {"warnings", c.warnings},
      {"recovered", c.recovered}, {"no_victim", c.no_victim},     {"driver_pools", c.driver_pools}};
  if (auto done = run->Finish("stopped", 0, summary.dump()); !done && !noted_journal_) {
    NoteOnce(done.error().what);
  }
}

}  // namespace headroom
