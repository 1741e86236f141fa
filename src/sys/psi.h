// Psi: pressure stall information from /proc/pressure/memory (kernel 4.20+, CONFIG_PSI).
//
// The file holds two lines (Documentation/accounting/psi.rst):
//   some avg10=0.00 avg60=0.00 avg300=0.00 total=0
//   full avg10=0.00 avg60=0.00 avg300=0.00 total=0
// "some" is the share of wall time in which at least one task stalled waiting for memory
// (reclaim, refault, swap-in); "full" the share in which all non-idle tasks stalled at once.
// avg* are percentages over 10 s, 60 s and 300 s windows; total is cumulative stall time in
// microseconds. MemAvailable says how much is left; PSI says whether the kernel is already
// working to produce it, which is what makes "115 GiB available" and "6 GiB available under
// reclaim" different readings.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/result.h"
#include "sys/sysroot.h"

namespace headroom {

struct PsiLine {
  double avg10 = 0;       // percent of the last 10 s
  double avg60 = 0;       // percent of the last 60 s
  double avg300 = 0;      // percent of the last 300 s
  uint64_t total_us = 0;  // cumulative stall time since boot, microseconds
};

struct Psi {
  PsiLine some;
  // Absent from /proc/pressure/cpu before 5.13; present for memory and io since 4.20. Kept
  // optional so one parser serves every resource file.
  std::optional<PsiLine> full;
};

// Parses the text of a pressure file. Keys are found by name, in any order, with any number
// of spaces (or a trailing '\r') between them; unknown keys and unknown lines are ignored so
// a future kernel's additions do not break the reader. An error when there is no "some" line,
// or when a "some"/"full" line lacks one of avg10, avg60, avg300, total or has a value that
// is not a number (negative, NaN, overflow): a file that exists but says nothing usable.
// The first "some" and the first "full" line win.
Result<Psi> ParsePsi(std::string_view text);

// Reads "proc/pressure/memory" below `root`. nullopt, not an error, when the file does not
// exist (kernel before 4.20, CONFIG_PSI=n, or booted with psi=0, which skips creating
// /proc/pressure) or the kernel answers EOPNOTSUPP. An error naming the path when the file
// exists but cannot be read or parsed.
Result<std::optional<Psi>> ReadMemoryPsi(const SysRoot& root);

}  // namespace headroom
