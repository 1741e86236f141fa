// `headroom bandwidth` on the terminal, in the user's language: each copy measured, in the
// order taken, on stdout; each failure on stderr. --json is the library's
// (doctor/bandwidth.h BandwidthToJson).
#pragma once

#include <cstdint>

#include "cli/cli.h"
#include "doctor/bandwidth.h"

namespace headroom {

// "--size lowered to 2.00 GiB (1/8 of MemAvailable 16.00 GiB)".
void PrintHostCopyLowered(const CliEnv& env, uint64_t host_bytes, uint64_t available_bytes);

// The host copy, each device's copy (with GB10's band), why the devices were not measured
// (unless `device_only`: then it is a failure), and the units line.
void PrintBandwidthReport(const CliEnv& env, const BandwidthReport& report, bool device_only);

// Each failure on stderr, as "headroom: bandwidth: ...": those BandwidthFailed counts.
void PrintBandwidthFailures(const CliEnv& env, const BandwidthReport& report, bool device_only);

}  // namespace headroom
