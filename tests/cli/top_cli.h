// What the two CLI tests of `headroom top` (in tmux, and batch mode through RunCli) share:
// the fixture machines they run against.
#pragma once

#include <string>

namespace headroom::testing {

inline const std::string kTopSource = HEADROOM_SOURCE_DIR;
inline const std::string kPsBox = kTopSource + "/tests/fixtures/ps-box";
inline const std::string kGb10Idle = kTopSource + "/tests/fixtures/gb10-idle";

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace headroom::testing
