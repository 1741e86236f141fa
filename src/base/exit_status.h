// Every exit status headroom returns, in one table: the library's (the guard's, a sweep's) and
// the CLI's. docs/cli.md lists the same table (a test compares them), and each command's
// --help names the ones it uses.
#pragma once

namespace headroom {

inline constexpr int kExitOk = 0;
// A negative answer: `plan` does not fit, `ps --need` something must stop first, `explain` no
// step series, `sweep` no config ran ok, `ladder` refused, a measurement or listen failed.
inline constexpr int kExitNegative = 1;
// A usage or input error: an unknown flag, a bad value, an unreadable file, a broken
// configuration.
inline constexpr int kExitUsage = 2;
// `guard --require-available`, `sweep`: not enough MemAvailable to start.
inline constexpr int kExitRefused = 3;
// `sweep`: an answer, but a failure that is not about memory (an `error` trial) stopped a knob
// with values between the answer and it never tried, so a larger value may fit
// (docs/sweep.md "Untried values").
inline constexpr int kExitSweepUntried = 4;
// `guard`, `watch --guard`: the guard killed the job (otherwise they pass on the job's own
// status: its exit code, or 128 + signal). No signal death maps here (those are 128 + N) and
// ordinary programs do not return it.
inline constexpr int kExitGuardKilled = 99;
// `guard --group` (docs/guard-group.md): the guard group ended this node's job because
// another node's guard ended its job for memory, another node's job failed, or another node
// was lost (silent past --heartbeat-timeout, its guard gone, or never joined). Beside 99,
// below any 128 + N, and not among the statuses Python, torchrun or Slurm's srun use.
inline constexpr int kExitGroupPeerMemory = 96;
inline constexpr int kExitGroupPeerFailed = 97;
inline constexpr int kExitGroupPeerLost = 98;
// Any command: an internal error, an exception no code below expected (a bug, or a failure of
// the C++ runtime such as threads that cannot be made), caught at the edge and printed as one
// line (cli/cli.cc RunCli). 70 is EX_SOFTWARE of sysexits.h.
inline constexpr int kExitInternal = 70;
// `sweep`: stopped by SIGINT/SIGTERM/SIGHUP (128 + SIGINT, as shells do); rerun to resume.
inline constexpr int kExitSweepInterrupted = 130;

// `doctor` has its own, because its verdict needs three (docs/doctor.md): 0 ready, 1 ready
// with warnings, 2 blocked (ExitStatusFor in doctor/checks.h), and so its usage error is 3.
inline constexpr int kExitDoctorReady = 0;
inline constexpr int kExitDoctorWarnings = 1;
inline constexpr int kExitDoctorBlocked = 2;
inline constexpr int kExitDoctorUsage = 3;

}  // namespace headroom
