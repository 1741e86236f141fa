// The pool's levels that more than one command uses, defined once below the commands: today
// the guard's kill level when none is given (docs/guard.md "Options", docs/config.md).
#pragma once

#include <cstdint>

namespace headroom {

// The kill level when none is given: the larger of 4 GiB and 8 % of MemTotal. Used by
// `guard`, `sweep` (every trial), `watch --guard`, and `ps --need` (as the reserve).
uint64_t DefaultKillLevelBytes(uint64_t mem_total_bytes);

}  // namespace headroom
