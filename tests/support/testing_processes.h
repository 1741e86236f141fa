// Whether a process the tests started is still there: the CLI tests check that every process
// a guard, a sweep or ps signalled is gone, zombies counted as gone.
#pragma once

#include <sys/types.h>

#include "sys/processes.h"
#include "sys/sysroot.h"

namespace headroom::testing {

// `pid` exists and is neither a zombie nor dead (its /proc/PID/stat state).
inline bool Alive(pid_t pid) {
  auto s = ReadProcStat(SysRoot("/"), pid);
  return s && s->state != 'Z' && s->state != 'X';
}

}  // namespace headroom::testing
