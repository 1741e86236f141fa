#include "guardian/guardian_record.h"

#include "guard/guard_record.h"

namespace headroom {

GuardianRecord::GuardianRecord(const std::optional<std::filesystem::path>& journal,
                               const std::vector<std::string>& command, std::FILE* events,
                               Note note)
    : events_(events), have_events_(events != nullptr), note_(std::move(note)) {
  if (!journal) return;
  auto begun = RecordedRun::Open(*journal, RunKind::kGuardian, command);
  if (!begun) {
    NoteOnce(begun.error().what);
    noted_journal_ = true;
    return;
  }
  run_.emplace(std::move(*begun));
}

void GuardianRecord::NoteOnce(const Message& m) {
  if (note_) note_(m);
}

void GuardianRecord::Start(const SysRoot& real_root, uint64_t kill_below, uint64_t warn_below) {
  if (!run_) return;
  if (auto added = RecordGuardStart(*run_, ThisGuardStart(real_root, kill_below, warn_below));
      !added && !noted_journal_) {
    noted_journal_ = true;
    NoteOnce(added.error().what);
  }
}

void GuardianRecord::Event(const GuardianEvent& event, double monotonic_s) {
  nlohmann::ordered_json fields = event.fields;
  fields["message"] = EnglishText(event.line);
  if (run_) {
    if (auto added = run_->AddEvent(event.type, fields.dump(), monotonic_s);
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
  if (!run_) return;
  const nlohmann::ordered_json summary{
      {"kills", c.kills},         {"escalations", c.escalations}, {"warnings", c.warnings},
      {"recovered", c.recovered}, {"no_victim", c.no_victim},     {"driver_pools", c.driver_pools}};
  if (auto done = run_->Finish("stopped", 0, summary.dump()); !done && !noted_journal_) {
    NoteOnce(done.error().what);
  }
}

}  // namespace headroom
