// The layout of `headroom top`: a pure function from what is known (the snapshot, its
// history, the UI state) and the terminal (its size, its colours, whether it shows UTF-8)
// to a Frame. No terminal is touched, so every size is a unit test.
//
// Top to bottom: the title bar; the pool (or host memory) as a bar with the running guards'
// levels marked, its figures and the guards; the readings with short graphs, packed into
// as many columns as the width holds; the GPU line (caps, throttle reasons as words, or why
// there is no GPU); the processes holding the pool; the events; the keys. When the height is
// short the less important readings go first, then the events; below kMinWidth x kMinHeight
// the frame says the terminal is too small instead of drawing a garbled one.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "top/frame.h"
#include "top/history.h"
#include "top/palette.h"
#include "top/top_model.h"
#include "top/ui_state.h"

namespace headroom {

inline constexpr size_t kMinWidth = 40;
inline constexpr size_t kMinHeight = 10;

struct ViewOptions {
  size_t width = 80;
  size_t height = 24;
  ColourMode colour = ColourMode::k256;
  bool utf8 = true;
  std::chrono::milliseconds interval{1000};
  std::string host;
  // --once / --iterations: no key hints (no keys are read), and the process and event
  // lists are not cut to the height (`height` is then only an upper bound).
  bool batch = false;
};

Frame LayoutTop(const TopSnapshot& snapshot, const History& history, const UiState& ui,
                const ViewOptions& options);

// The throttle reasons of a clock-event mask as words for people ("power cap (software)"),
// translated; gpu_idle is left out (it flips with every pause in the work). Empty: none set.
std::vector<std::string> ThrottleWords(uint64_t mask);

}  // namespace headroom
