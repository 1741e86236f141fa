#include "top/cadence.h"

#include <algorithm>

namespace headroom {

void SampleCadence::Advance(TimePoint now, bool skip_overrun) {
  next_ += interval_;
  if (skip_overrun && next_ < now) next_ = now + interval_;
}

std::chrono::milliseconds SampleCadence::WaitFrom(TimePoint now) const {
  return std::max(std::chrono::ceil<std::chrono::milliseconds>(next_ - now),
                  std::chrono::milliseconds(0));
}

}  // namespace headroom
