// The words of the library's enums on the terminal, in the user's language: the library
// names them (CheckVerdictName, DoctorVerdictName, HolderActionName: identifiers for JSON),
// the CLI translates (docs/architecture.md, "Words at the edge").
#pragma once

#include <string_view>

#include "doctor/checks.h"
#include "pool/pool_advice.h"

namespace headroom {

std::string_view CheckVerdictLabel(CheckVerdict v);       // "pass", "warn", ... translated
std::string_view DoctorVerdictLabel(DoctorVerdict v);     // "ready", "blocked", ... translated
std::string_view HolderActionLabel(HolderAction action);  // "keep", "stop", "part-of" translated

}  // namespace headroom
