// The OOM ladder: the remedies for an out-of-memory failure, in the order that costs the
// least first, as a per-job state machine. Pure: no I/O, no clock; the CLI stores the
// state in the journal (ladder/ladder_journal.h) and docs/ladder.md explains the steps.
//
//   1 flush the page cache  2 shorter packing, then smaller batch
//   3 downgrade the method  4 fall back: a smaller model or a second machine
//
// A step is left only with a result (ok closes the ladder as solved there, oom moves on)
// or by an explicit skip (`--force`), which is recorded: the order is the point.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/message.h"
#include "base/result.h"

namespace headroom {

inline constexpr int kLadderFirstStep = 1;
inline constexpr int kLadderLastStep = 4;

// "flush-page-cache", "packing-then-batch", "downgrade-method", "fall-back"; "" outside 1..4.
std::string_view LadderStepName(int step);
// One line saying what the step is, in English: ladder --json's step_title. Marked for
// translation: the terminal shows it translated (Tr; TrText in the CLI).
std::string_view LadderStepTitle(int step);

enum class LadderSymptom { kLoad, kStep };
std::string_view Name(LadderSymptom s);  // "load", "step"
Result<LadderSymptom> ParseLadderSymptom(std::string_view text);

enum class LadderStatus { kOpen, kSolved, kExhausted };
std::string_view Name(LadderStatus s);  // "open", "solved", "exhausted"
Result<LadderStatus> ParseLadderStatus(std::string_view text);

enum class LadderResult { kOk, kOom };
std::string_view Name(LadderResult r);  // "ok", "oom"
Result<LadderResult> ParseLadderResult(std::string_view text);

struct LadderState {
  int step = kLadderFirstStep;  // the current step; the solving one once solved
  LadderStatus status = LadderStatus::kOpen;
  bool operator==(const LadderState&) const = default;
};

// The state after a result observed at the current step. Error when the ladder is closed.
Result<LadderState> AfterResult(const LadderState& state, LadderResult result);

// The state after `ladder next`: moving on without a result is a skip, refused unless
// `force`. Error (with the reason and the way out) when refused or closed.
Result<LadderState> AfterSkip(const LadderState& state, bool force);

// What the symptom says about a step, or "" when nothing: an OOM while loading is a peak
// that packing and batch never reach, so step 2 matters less for it (the order is kept:
// a run that loads can still OOM at its first step). A message value: the journal's
// evidence stores its English text, the terminal shows it translated.
Message SymptomNote(LadderSymptom symptom, int step);

}  // namespace headroom
