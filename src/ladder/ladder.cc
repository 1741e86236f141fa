// Implementation notes: the transitions are the whole of the ladder's rules, so they live
// here, apart from storage and printing, and ladder_test.cc walks every edge.
#include "ladder/ladder.h"

#include <fmt/format.h>

#include "base/message.h"

namespace headroom {

std::string_view LadderStepName(int step) {
  switch (step) {
    case 1:
      return "flush-page-cache";
    case 2:
      return "packing-then-batch";
    case 3:
      return "downgrade-method";
    case 4:
      return "fall-back";
    default:
      return "";
  }
}

std::string_view LadderStepTitle(int step) {
  switch (step) {
    case 1:
      return N_("flush the page cache between runs");
    case 2:
      return N_("shorten the packing length first, then reduce the batch size");
    case 3:
      return N_("downgrade the method (QLoRA to bf16 LoRA)");
    case 4:
      return N_(
          "fall back: a smaller model, or a second machine (DDP/FSDP, never tensor parallelism)");
    default:
      return "";
  }
}

std::string_view Name(LadderSymptom s) { return s == LadderSymptom::kLoad ? "load" : "step"; }

Result<LadderSymptom> ParseLadderSymptom(std::string_view text) {
  if (text == "load") return LadderSymptom::kLoad;
  if (text == "step") return LadderSymptom::kStep;
  return Error{Msg("'{}' is not load or step", text)};
}

std::string_view Name(LadderStatus s) {
  switch (s) {
    case LadderStatus::kOpen:
      return "open";
    case LadderStatus::kSolved:
      return "solved";
    case LadderStatus::kExhausted:
      return "exhausted";
  }
  return "open";
}

Result<LadderStatus> ParseLadderStatus(std::string_view text) {
  if (text == "open") return LadderStatus::kOpen;
  if (text == "solved") return LadderStatus::kSolved;
  if (text == "exhausted") return LadderStatus::kExhausted;
  return Error{Msg("'{}' is not open, solved or exhausted", text)};
}

std::string_view Name(LadderResult r) { return r == LadderResult::kOk ? "ok" : "oom"; }

Result<LadderResult> ParseLadderResult(std::string_view text) {
  if (text == "ok") return LadderResult::kOk;
  if (text == "oom") return LadderResult::kOom;
  return Error{Msg("'{}' is not ok or oom", text)};
}

namespace {

std::optional<Error> RefuseClosed(const LadderState& state) {
  if (state.status == LadderStatus::kOpen) return std::nullopt;
  // TRANSLATORS: {0} is the ladder's status as stored: "solved" or "exhausted".
  return Error{Msg("the ladder is already {0} (at step {1}); start a new one", Name(state.status),
                   state.step)};
}

}  // namespace

Result<LadderState> AfterResult(const LadderState& state, LadderResult result) {
  if (auto closed = RefuseClosed(state)) return *closed;
  if (result == LadderResult::kOk) return LadderState{state.step, LadderStatus::kSolved};
  if (state.step >= kLadderLastStep) return LadderState{state.step, LadderStatus::kExhausted};
  return LadderState{state.step + 1, LadderStatus::kOpen};
}

Result<LadderState> AfterSkip(const LadderState& state, bool force) {
  if (auto closed = RefuseClosed(state)) return *closed;
  if (state.step >= kLadderLastStep) {
    return Error{Msg("step {} is the last; record its result instead", state.step)};
  }
  if (!force) {
    return Error{
        Msg("step {} ({}) has no result: rerun the job and record one (ladder record JOB --result "
            "ok|oom), or skip it with --force (the skip is recorded)",
            state.step, LadderStepName(state.step))};
  }
  return LadderState{state.step + 1, LadderStatus::kOpen};
}

Message SymptomNote(LadderSymptom symptom, int step) {
  if (symptom != LadderSymptom::kLoad) return {};
  switch (step) {
    case 1:
      return Msg(
          "an OOM while loading meets the page cache at its fullest (the checkpoint was just "
          "read), so a flush matters most here");
    case 2:
      return Msg(
          "packing and batch do not change the load peak (weights plus the load transient); "
          "this step matters less for an OOM while loading, but the order is kept");
    case 3:
      return Msg(
          "QLoRA quantizes while loading: its transient buffers can OOM where bf16 LoRA loads");
    default:
      return {};
  }
}

}  // namespace headroom
