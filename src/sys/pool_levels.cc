// The pool's shared levels (sys/pool_levels.h).
#include "sys/pool_levels.h"

#include <algorithm>

namespace headroom {

uint64_t DefaultKillLevelBytes(uint64_t mem_total_bytes) {
  return std::max<uint64_t>(4ULL << 30, mem_total_bytes * 8 / 100);
}

}  // namespace headroom
