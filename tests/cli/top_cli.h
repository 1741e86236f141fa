// What the two CLI tests of `headroom top` (in tmux, and batch mode through RunCli) share:
// the fixture machines they run against.
#pragma once

#include <string>

#include "testing_files.h"

namespace headroom::testing {

inline const std::string kTopSource = HEADROOM_SOURCE_DIR;
inline const std::string kPsBox = kTopSource + "/tests/fixtures/ps-box";
inline const std::string kGb10Idle = kTopSource + "/tests/fixtures/gb10-idle";

}  // namespace headroom::testing
