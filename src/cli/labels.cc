#include "cli/labels.h"

#include "cli/i18n.h"

namespace headroom {

std::string_view CheckVerdictLabel(CheckVerdict v) {
  switch (v) {
    // TRANSLATORS: a doctor check's verdict, in a 4-column field: keep it short.
    case CheckVerdict::kPass:
      return Tr(N_("pass"));
    case CheckVerdict::kWarn:
      return Tr(N_("warn"));
    case CheckVerdict::kFail:
      return Tr(N_("fail"));
    case CheckVerdict::kSkip:
      return Tr(N_("skip"));
    case CheckVerdict::kInfo:
      return Tr(N_("info"));
  }
  return Tr(N_("info"));
}

std::string_view DoctorVerdictLabel(DoctorVerdict v) {
  switch (v) {
    // TRANSLATORS: doctor's overall verdict: nothing to fix before the run.
    case DoctorVerdict::kReady:
      return Tr(N_("ready"));
    case DoctorVerdict::kReadyWithWarnings:
      return Tr(N_("ready-with-warnings"));
    // TRANSLATORS: doctor's overall verdict: a check failed or the workload does not fit.
    case DoctorVerdict::kBlocked:
      return Tr(N_("blocked"));
  }
  return Tr(N_("blocked"));
}

std::string_view HolderActionLabel(HolderAction action) {
  switch (action) {
    // TRANSLATORS: ps --need's advice for a process: it can stay beside the job.
    case HolderAction::kKeep:
      return Tr(N_("keep"));
    // TRANSLATORS: ps --need's advice for a process: stop it before the job.
    case HolderAction::kStop:
      return Tr(N_("stop"));
    // TRANSLATORS: ps --need's advice: the process is part of another (a server's worker).
    case HolderAction::kPartOf:
      return Tr(N_("part-of"));
  }
  return "?";
}

}  // namespace headroom
